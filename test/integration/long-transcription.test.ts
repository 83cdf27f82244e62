/**
 * Issue 41, item 3: long recordings on the models file's transcription model, billed where they are heard.
 *
 * The recording is four minutes of tones and silence made in the test (test/helpers/tone-speech.ts); the scripted
 * upstream "hears" each file it gets as its tones, timed from the start of that file. With pieces of 60 s and two
 * at a time, the agent tool `transcribe_audio` (over MCP) and the extraction domain `audio.transcription` must cut
 * the file, send the pieces two at once, and stitch the answers into the recording's own timeline — every tone once,
 * at its place — which only happens when the pieces were offset, ordered and de-duplicated. Each is billed per
 * started second at the model's price on the caller's wallet, shows it in its usage, and a wallet that cannot pay
 * is refused with 402 before any upstream call. `video.transcription` puts the speech track's words in the scenes;
 * a custom schema over audio is filled from the transcript; a long recording sent through the vlmrun SDK with
 * `batch` runs on the job queue, and one interrupted by a restart is transcribed again by the next start. The
 * deterministic planner (no language model) and an upstream-planned agent chat turn both transcribe, billed besides
 * the planner's tokens.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { VlmRun } from 'vlmrun';
import { rawSql } from '../helpers/raw-sql';
import { connectMcp, toolError, toolOutput } from '../helpers/mcp-client';
import { makeVideo } from '../helpers/media-clips';
import { expectedToneSegments, makeToneWav, toneText, type ToneBlock } from '../helpers/tone-speech';
import { call, startTestApp, uploadFile } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

/** $0.06 a minute: $0.001 a second, 1000 micro-dollars. */
const PER_MINUTE = 0.06;
const UPSTREAM_MODEL = 'tone-whisper';

/** Nine 20 s tones, each followed by 5 s of silence, then 15 s of silence: 240 s. */
const BLOCKS: ToneBlock[] = [
  ...Array.from({ length: 9 }, (_, k) => [
    { hz: 300 + 100 * k, seconds: 20 },
    { hz: 0, seconds: 5 },
  ]).flat(),
  { hz: 0, seconds: 15 },
];
const EXPECTED = expectedToneSegments(BLOCKS);
/** A shorter one for the queued cases: 130 s, three pieces. */
const SHORT_BLOCKS: ToneBlock[] = [
  { hz: 500, seconds: 50 },
  { hz: 0, seconds: 10 },
  { hz: 700, seconds: 50 },
  { hz: 0, seconds: 20 },
];

interface QueuedPrediction {
  id: string;
  status: string;
  response: { segments: { start_time: number; end_time: number; content: string }[] } | null;
  usage: { message: string | null };
}

const asTimeline = (p: QueuedPrediction) =>
  (p.response?.segments ?? []).map((s) => ({ start: s.start_time, end: s.end_time, text: s.content }));

describe('long recordings: cut, sent in parallel, stitched, billed', () => {
  let lab: UpstreamApp;
  const recording = makeToneWav(BLOCKS);
  const pieceCalls = () => lab.upstream.requests.filter((r) => r.path.endsWith('/audio/transcriptions'));
  const balanceOf = async (org: string): Promise<number> => {
    const { orgId } = await lab.app.container.services.accounts.addCredits(org, 0);
    return lab.app.container.stores.wallets.balance(orgId);
  };
  const upload = async (key: string, bytes: Buffer, filename: string): Promise<string> => {
    const res = await uploadFile(lab.app.url, key, bytes, { filename });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'whisper',
          upstreamModel: UPSTREAM_MODEL,
          capabilities: null,
          more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
        },
      ],
      {
        env: {
          PRISM_TRANSCRIPTION_PIECE_S: '60',
          PRISM_TRANSCRIPTION_PARALLEL: '2',
          PRISM_RATE_LIMIT_PER_MINUTE: '1000',
        },
      },
    );
    // Every piece is heard as its tones, after a pause long enough that two pieces are in flight together.
    lab.upstream.forModel(UPSTREAM_MODEL, { kind: 'transcription', tones: true, delayMs: 300 });
  });
  afterAll(() => lab?.close());

  it('transcribe_audio: five pieces of 60 s (1 s sent twice), two at a time, stitched into the whole timeline', async () => {
    const key = await lab.app.createKey('long-tool');
    await lab.app.container.services.accounts.addCredits('long-tool', 1);
    const start = await balanceOf('long-tool');
    const fileId = await upload(key, recording, 'lecture.wav');
    const before = pieceCalls().length;
    const mcp = await connectMcp(lab.app.url, `Bearer ${key}`, { toolsets: 'agent_tools' });
    let output: Record<string, unknown>;
    try {
      const result = (await mcp.callTool({ name: 'transcribe_audio', arguments: { audio: fileId } })) as CallToolResult;
      output = toolOutput(result);
    } finally {
      await mcp.close();
    }
    const segments = (output.segments as { start_s: number; end_s: number; text: string }[]).map((s) => ({
      start: s.start_s,
      end: s.end_s,
      text: s.text,
    }));
    expect(segments).toEqual(EXPECTED);
    expect(output.text).toBe(EXPECTED.map((s) => s.text).join(' '));
    const calls = pieceCalls().slice(before);
    // 0–60, 59–119, 118–178, 177–237, 236–240: each a WAV piece named after the recording.
    expect(calls).toHaveLength(5);
    expect(calls.map((c) => (c.body.file as { filename: string }).filename).sort()).toEqual(
      [1, 2, 3, 4, 5].map((n) => `lecture.part${n}.wav`),
    );
    expect(calls.every((c) => (c.body.file as { mimeType: string }).mimeType === 'audio/wav')).toBe(true);
    expect(Math.max(...calls.map((c) => c.inFlight))).toBe(2);
    // 240 s at $0.001 a second, debited once for the whole recording and shown in the tool's output.
    expect(output).toMatchObject({ billed_seconds: 240, cost_dollars: 0.24 });
    expect(start - (await balanceOf('long-tool'))).toBe(240_000);
  });

  it('audio.transcription: the same timeline from a generate request, billed with the request', async () => {
    const key = await lab.app.createKey('long-extract');
    await lab.app.container.services.accounts.addCredits('long-extract', 1);
    const start = await balanceOf('long-extract');
    const fileId = await upload(key, recording, 'lecture.wav');
    const before = pieceCalls().length;
    const res = await call(`${lab.app.url}/v1/audio/generate`, {
      key,
      json: { file_id: fileId, domain: 'audio.transcription', batch: false },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      response: {
        metadata: { duration: number };
        segments: { start_time: number; end_time: number; content: string }[];
      };
      usage: { message: string };
    };
    expect(body.response.metadata.duration).toBe(240);
    expect(body.response.segments.map((s) => ({ start: s.start_time, end: s.end_time, text: s.content }))).toEqual(
      EXPECTED,
    );
    const pieces = pieceCalls().length - before;
    expect(pieces).toBeGreaterThanOrEqual(4);
    expect(body.usage.message).toContain(`Transcribed by whisper in ${pieces} pieces`);
    expect(body.usage.message).toContain('240 s of audio heard');
    expect(start - (await balanceOf('long-extract'))).toBe(240_000);
  });

  it('a wallet that cannot pay for the seconds gets 402 insufficient_credits, before any upstream call', async () => {
    const key = await lab.app.createKey('long-short');
    await lab.app.container.services.accounts.addCredits('long-short', 0.1); // 100 s of the 240 s
    const fileId = await upload(key, recording, 'lecture.wav');
    const before = pieceCalls().length;
    const res = await call(`${lab.app.url}/v1/audio/generate`, {
      key,
      json: { file_id: fileId, domain: 'audio.transcription', batch: false },
    });
    expect(res.status).toBe(402);
    expect(JSON.stringify(await res.json())).toContain('insufficient_credits');
    const mcp = await connectMcp(lab.app.url, `Bearer ${key}`, { toolsets: 'agent_tools' });
    try {
      const failed = (await mcp.callTool({ name: 'transcribe_audio', arguments: { audio: fileId } })) as CallToolResult;
      expect(toolError(failed).code).toBe('insufficient_credits');
    } finally {
      await mcp.close();
    }
    expect(pieceCalls()).toHaveLength(before);
    expect(await balanceOf('long-short')).toBe(100_000);
  });

  it('video.transcription: the speech track is cut to WAV and what was said lands in its scene', async () => {
    const video = await makeVideo(
      [
        { durationS: 3, color: 'red', text: ['ALPHA'] },
        { durationS: 3, color: 'blue', text: ['BETA'] },
      ],
      { withTone: true },
    );
    const key = lab.app.ownerKey;
    const fileId = await upload(key, video, 'clip.mp4');
    const before = pieceCalls().length;
    const res = await call(`${lab.app.url}/v1/video/generate`, {
      key,
      json: { file_id: fileId, domain: 'video.transcription', batch: false },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      response: { segments: { audio: { content: string | null; speech_detected: boolean | null } }[] };
      usage: { message: string };
    };
    const sent = pieceCalls().slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.file).toMatchObject({ mimeType: 'audio/wav', filename: 'clip.part1.wav' });
    const said = body.response.segments.map((s) => s.audio.content).filter((c) => c !== null);
    expect(said).toEqual([toneText(440)]);
    expect(body.usage.message).toContain('Transcribed by whisper');
  });

  it('the vlmrun SDK: audio.generate of a long recording with batch goes through the job queue', async () => {
    const key = await lab.app.createKey('long-sdk');
    await lab.app.container.services.accounts.addCredits('long-sdk', 1);
    const start = await balanceOf('long-sdk');
    const client = new VlmRun({ apiKey: key, baseURL: `${lab.app.url}/v1` });
    const filePath = path.join(lab.dir, 'meeting.wav');
    fs.writeFileSync(filePath, makeToneWav(SHORT_BLOCKS));
    const file = await client.files.upload({ filePath, purpose: 'vision' });
    const queued = (await client.audio.generate({
      fileId: file.id,
      model: 'prism-1',
      domain: 'audio.transcription',
      batch: true,
    })) as unknown as QueuedPrediction;
    expect(queued.status).toBe('pending');
    const done = (await client.predictions.wait(queued.id, 60, 0.2)) as unknown as QueuedPrediction;
    expect(done.status).toBe('completed');
    expect(asTimeline(done)).toEqual(expectedToneSegments(SHORT_BLOCKS));
    expect(done.usage.message).toContain('130 s of audio heard');
    expect(start - (await balanceOf('long-sdk'))).toBe(130_000);
  });

  it('a queued long recording interrupted by a restart is transcribed again by the next start, and billed', async () => {
    // The in-process queue's restart sweep takes a running record over (extraction.test.ts does the same for PDFs).
    const env = {
      PRISM_MODELS_FILE: path.join(lab.dir, 'models.yaml'),
      PRISM_TRANSCRIPTION_PIECE_S: '60',
      PRISM_REDIS_URL: '',
    };
    const first = await startTestApp(env);
    let dataDir = first.dataDir;
    try {
      const key = await first.createKey('long-restart');
      const fileId = await (async () => {
        const res = await uploadFile(first.url, key, makeToneWav(SHORT_BLOCKS), { filename: 'call.wav' });
        return ((await res.json()) as { id: string }).id;
      })();
      await first.container.services.accounts.addCredits('long-restart', 1);
      const res = await call(`${first.url}/v1/audio/generate`, {
        key,
        json: { file_id: fileId, domain: 'audio.transcription', batch: true },
      });
      const { id } = (await res.json()) as { id: string };
      await first.container.jobs.idle();
      // As if the process had died while the pieces were being heard.
      await rawSql(first.container).run(
        `UPDATE predictions SET status = 'running', completed_at = NULL, response_json = NULL WHERE id = ?`,
        [id],
      );
      await first.stop();
      dataDir = first.dataDir;
      const before = pieceCalls().length;
      const second = await startTestApp(env, dataDir);
      try {
        const orgBalance = async () => {
          const { orgId } = await second.container.services.accounts.addCredits('long-restart', 0);
          return second.container.stores.wallets.balance(orgId);
        };
        const afterFirst = await orgBalance();
        await second.container.jobs.idle();
        const done = (await (await call(`${second.url}/v1/predictions/${id}`, { key })).json()) as QueuedPrediction;
        expect(done.status).toBe('completed');
        expect(asTimeline(done)).toEqual(expectedToneSegments(SHORT_BLOCKS));
        expect(pieceCalls().length - before).toBeGreaterThanOrEqual(2);
        // The resumed run holds and debits what it heard (its first hold died with the first process).
        expect(afterFirst - (await orgBalance())).toBe(130_000);
      } finally {
        await second.close();
      }
    } catch (error) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  });

  it('an agent execution without a language model transcribes the recording and bills it in its usage', async () => {
    const key = await lab.app.createKey('long-agent');
    await lab.app.container.services.accounts.addCredits('long-agent', 1);
    const start = await balanceOf('long-agent');
    const blocks: ToneBlock[] = [
      { hz: 600, seconds: 4 },
      { hz: 0, seconds: 2 },
    ];
    const fileId = await upload(key, makeToneWav(blocks), 'memo.wav');
    const res = await call(`${lab.app.url}/v1/agent/execute`, {
      key,
      json: {
        inputs: { memo: { type: 'input_file', file_id: fileId } },
        config: { prompt: 'Transcribe the voice note' },
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      status: string;
      response: { memo: { type: string; model: string; text: string; billed_seconds: number } };
      usage: { element_type: string; cost_dollars: number; standard_cost_dollars: number };
    };
    expect(body.status).toBe('completed');
    // The deterministic planner read the audio with transcribe_audio, not probe_audio.
    expect(body.response.memo).toMatchObject({
      type: 'audio',
      model: 'whisper',
      text: toneText(600),
      billed_seconds: 6,
    });
    // 6 s at $0.001: the run's cost is the transcription's (the deterministic planner's tokens are free).
    expect(body.usage).toMatchObject({ element_type: 'audio', cost_dollars: 0.006, standard_cost_dollars: 0.006 });
    expect(start - (await balanceOf('long-agent'))).toBe(6000);
  });

  it('a custom schema over audio is filled from what was said', async () => {
    const key = lab.app.ownerKey;
    const fileId = await upload(key, makeToneWav([{ hz: 400, seconds: 3 }]), 'order.wav');
    lab.upstream.next({
      kind: 'transcription',
      segments: [
        { start: 0, end: 1.5, text: 'Invoice Number: INV-4417' },
        { start: 1.5, end: 3, text: 'Total Due: 86.40' },
      ],
    });
    const res = await call(`${lab.app.url}/v1/audio/generate`, {
      key,
      json: {
        file_id: fileId,
        batch: false,
        config: {
          json_schema: {
            type: 'object',
            properties: {
              invoice_number: { type: ['string', 'null'] },
              total_due: { type: ['number', 'string', 'null'] },
            },
          },
        },
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { response: Record<string, unknown>; usage: { message: string } };
    expect(body.response).toMatchObject({ invoice_number: 'INV-4417' });
    expect(String(body.response.total_due)).toBe('86.4');
    expect(body.usage.message).toContain('Transcribed by whisper');
  });
});

describe('an agent chat turn that transcribes', () => {
  let lab: UpstreamApp;
  beforeAll(async () => {
    lab = await startUpstreamApp([
      {
        id: 'whisper',
        upstreamModel: UPSTREAM_MODEL,
        capabilities: null,
        more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
      },
      CHAT_PLANNER,
    ]);
  });
  afterAll(() => lab?.close());

  it('the planner calls transcribe_audio, reads the transcript, and the call is billed besides the tokens', async () => {
    const key = await lab.app.createKey('speech-chat');
    const { orgId } = await lab.app.container.services.accounts.addCredits('speech-chat', 1);
    const start = await lab.app.container.stores.wallets.balance(orgId);
    const uploaded = await uploadFile(lab.app.url, key, makeToneWav([{ hz: 300, seconds: 5 }]), {
      filename: 'note.wav',
    });
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const seen = lab.upstream.requests.length;
    lab.upstream.next(
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_t', name: 'transcribe_audio', arguments: JSON.stringify({ audio: fileId }) }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      { kind: 'transcription', segments: [{ start: 0, end: 5, text: 'Remember to buy oat milk.' }] },
      {
        kind: 'reply',
        content: 'The note says to buy oat milk.',
        usage: { prompt_tokens: 2000, completion_tokens: 50 },
      },
    );
    const res = await call(`${lab.app.url}/v1/compat/chat/completions`, {
      key,
      json: {
        model: 'prism-orion-1',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'file', file: { file_id: fileId } },
              { type: 'text', text: 'Transcribe the voice note' },
            ],
          },
        ],
      },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { choices: { message: { content: string } }[]; usage: { cost: number } };
    expect(body.choices[0]?.message.content).toBe('The note says to buy oat milk.');
    const calls = lab.upstream.requests.slice(seen);
    expect(calls.map((c) => c.path.split('/').pop())).toEqual(['completions', 'transcriptions', 'completions']);
    const toolMessage = (calls[2]!.body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('Remember to buy oat milk.');
    // The planner's tokens (the reply's cost) and 5 s of transcription at $0.001 a second.
    const debited = start - (await lab.app.container.stores.wallets.balance(orgId));
    expect(debited - Math.round(body.usage.cost * 1e6)).toBe(5000);
  });
});
