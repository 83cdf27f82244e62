/**
 * Issue 41, items 1 and 2: a transcription model of the models file (`mode: transcription`, priced per audio
 * minute) is served on `POST /v1/compat/audio/transcriptions` and `/v1/openai/...`. The official openai SDK's
 * `audio.transcriptions.create` gets every response format from a scripted upstream's `/v1/audio/transcriptions`
 * (multipart, the file passed on whole under the upstream's model name); the call is billed per audio second on the
 * wallet; a chat model, an unknown format, a stream, a file over the limit and a wallet that cannot cover the
 * duration are refused with the spec's error shapes before the upstream is called; the listing shows the model's
 * mode and price. Item 3 in part: with the model configured, the extraction domain `audio.transcription` returns
 * the transcript in timed segments, and the agent tool `transcribe_audio` (called here over MCP) does the same.
 */
import OpenAI, { toFile } from 'openai';
import { SCRIPTED_SEGMENTS } from '../helpers/scripted-upstream';
import { call, startTestApp, uploadFile } from '../helpers/test-app';
import { connectMcp, toolError, toolOutput } from '../helpers/mcp-client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';
import { makeWav } from '../helpers/wav';

/** $0.06 a minute: $0.001 a second, so 5 s of audio costs $0.005 (above the $0.001 minimum per call). */
const PER_MINUTE = 0.06;
/** Form limit: a 5 s 16 kHz mono WAV (160 044 bytes) fits, a 10 s one does not. */
const MAX_BYTES = 200_000;
const WHISPER_UPSTREAM = 'Systran/faster-whisper-small';
const TRANSCRIPT = SCRIPTED_SEGMENTS.map((s) => s.text).join(' ');

interface SdkError {
  status: number;
  code: string | null;
  type: string | null;
  param: string | null;
  message: string;
}

async function sdkError(promise: Promise<unknown>): Promise<SdkError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error as unknown as SdkError;
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('audio transcriptions through the gateway', () => {
  let lab: UpstreamApp;
  let client: OpenAI;
  const wav5 = makeWav(5);
  const file = (bytes: Buffer = wav5) => toFile(bytes, 'note.wav', { type: 'audio/wav' });
  const clientFor = (key: string, surface = 'compat') =>
    new OpenAI({ apiKey: key, baseURL: `${lab.app.url}/v1/${surface}`, maxRetries: 0 });
  const balanceOf = async (org: string): Promise<number> => {
    const { orgId } = await lab.app.container.services.accounts.addCredits(org, 0);
    return lab.app.container.stores.wallets.balance(orgId);
  };
  const transcriptionCalls = () => lab.upstream.requests.filter((r) => r.path.endsWith('/audio/transcriptions'));

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'whisper',
          upstreamModel: WHISPER_UPSTREAM,
          capabilities: null,
          more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
        },
        {
          id: 'whisper-live',
          upstreamModel: 'live-whisper',
          capabilities: null,
          parameters: ['language', 'response_format', 'stream'],
          more: { mode: 'transcription', pricing: { per_minute: PER_MINUTE } },
        },
        { id: 'lab-chat', upstreamModel: 'chat-llm', pricing: { prompt: 1, completion: 1 } },
      ],
      { env: { PRISM_MAX_TRANSCRIPTION_BYTES: String(MAX_BYTES), PRISM_RATE_LIMIT_PER_MINUTE: '1000' } },
    );
    client = clientFor(lab.app.ownerKey);
  });
  afterAll(() => lab.close());

  it('json: the transcript, with the file and form passed on under the upstream model name', async () => {
    const before = transcriptionCalls().length;
    const reply = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper',
      language: 'en',
      prompt: 'A voice note.',
      temperature: 0.2,
    });
    expect(reply.text).toBe(TRANSCRIPT);
    expect(reply).toMatchObject({ usage: { type: 'duration', seconds: 5, cost: 0.005 } });
    const calls = transcriptionCalls();
    expect(calls).toHaveLength(before + 1);
    const sent = calls[calls.length - 1]!.body;
    expect(sent).toMatchObject({
      model: WHISPER_UPSTREAM,
      language: 'en',
      prompt: 'A voice note.',
      temperature: '0.2',
    });
    const sentFile = sent.file as { filename: string; mimeType: string; bytes: Buffer };
    expect(sentFile.filename).toBe('note.wav');
    expect(sentFile.mimeType).toBe('audio/wav');
    expect(Buffer.compare(sentFile.bytes, wav5)).toBe(0);
  });

  it('text, srt and vtt come back as the upstream wrote them', async () => {
    const text = await client.audio.transcriptions.create({
      file: await file(),
      model: 'whisper',
      response_format: 'text',
    });
    expect(String(text).trim()).toBe(TRANSCRIPT);
    const srt = String(
      await client.audio.transcriptions.create({ file: await file(), model: 'whisper', response_format: 'srt' }),
    );
    expect(srt).toContain('1\n00:00:00,000 --> 00:00:01,500\nHello from the scripted upstream.');
    expect(srt).toContain('2\n00:00:01,500 --> 00:00:04,000\nThis is the second sentence.');
    const vtt = String(
      await client.audio.transcriptions.create({ file: await file(), model: 'whisper', response_format: 'vtt' }),
    );
    expect(vtt.startsWith('WEBVTT')).toBe(true);
    expect(vtt).toContain('00:00:01.500 --> 00:00:04.000\nThis is the second sentence.');
  });

  it('verbose_json: timed segments and, when asked, words; also under /v1/openai', async () => {
    const openai = clientFor(lab.app.ownerKey, 'openai');
    const reply = await openai.audio.transcriptions.create({
      file: await file(),
      model: 'whisper',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(reply.text).toBe(TRANSCRIPT);
    expect(reply.duration).toBe(4);
    expect(reply.segments?.map((s) => [s.start, s.end, s.text])).toEqual(
      SCRIPTED_SEGMENTS.map((s) => [s.start, s.end, s.text]),
    );
    expect(reply.words?.[0]).toMatchObject({ word: 'Hello', start: 0 });
    const sent = transcriptionCalls().at(-1)!.body;
    expect(sent['timestamp_granularities[]']).toEqual(['word', 'segment']);
  });

  it('bills every started audio second at the per-minute price, on the wallet', async () => {
    const key = await lab.app.createKey('speech-payer');
    await lab.app.container.services.accounts.addCredits('speech-payer', 1);
    const start = await balanceOf('speech-payer');
    const reply = await clientFor(key).audio.transcriptions.create({
      file: await file(makeWav(2.3)),
      model: 'whisper',
    });
    // 2.3 s bills 3 seconds: $0.003.
    expect(reply).toMatchObject({ usage: { seconds: 3, cost: 0.003 } });
    expect(start - (await balanceOf('speech-payer'))).toBe(3000);
  });

  it('stream: true on a model that streams relays the upstream events, then bills the whole duration', async () => {
    const key = await lab.app.createKey('speech-stream');
    await lab.app.container.services.accounts.addCredits('speech-stream', 1);
    const start = await balanceOf('speech-stream');
    const stream = await clientFor(key).audio.transcriptions.create({
      file: await file(),
      model: 'whisper-live',
      stream: true,
    });
    const events: unknown[] = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([
      ...SCRIPTED_SEGMENTS.map((s) => ({ type: 'transcript.text.delta', delta: s.text })),
      { type: 'transcript.text.done', text: TRANSCRIPT },
    ]);
    expect(transcriptionCalls().at(-1)!.body).toMatchObject({ model: 'live-whisper', stream: 'true' });
    expect(start - (await balanceOf('speech-stream'))).toBe(5000);
  });

  it('402 insufficient_credits when the wallet cannot cover the duration; the upstream is not called', async () => {
    const key = await lab.app.createKey('speech-short');
    await lab.app.container.services.accounts.addCredits('speech-short', 0.004); // 4 s of the 5 s asked
    const before = transcriptionCalls().length;
    const err = await sdkError(clientFor(key).audio.transcriptions.create({ file: await file(), model: 'whisper' }));
    expect([err.status, err.code, err.type]).toEqual([402, 'insufficient_credits', 'billing_error']);
    expect(transcriptionCalls()).toHaveLength(before);
    expect(await balanceOf('speech-short')).toBe(4000);
  });

  it('refuses a chat model, an unknown format and a stream with 400 capability_violation', async () => {
    const before = transcriptionCalls().length;
    const chat = await sdkError(client.audio.transcriptions.create({ file: await file(), model: 'lab-chat' }));
    expect([chat.status, chat.code, chat.type, chat.param]).toEqual([
      400,
      'capability_violation',
      'invalid_request_error',
      'model',
    ]);
    const format = await sdkError(
      client.audio.transcriptions.create({
        file: await file(),
        model: 'whisper',
        response_format: 'diarized_json' as 'json',
      }),
    );
    expect([format.status, format.code, format.param]).toEqual([400, 'capability_violation', 'response_format']);
    expect(format.message).toContain('json, text, srt, vtt, verbose_json');
    const stream = await sdkError(
      client.audio.transcriptions.create({ file: await file(), model: 'whisper', stream: true }),
    );
    expect([stream.status, stream.code, stream.param]).toEqual([400, 'capability_violation', 'stream']);
    const unknown = await sdkError(client.audio.transcriptions.create({ file: await file(), model: 'no-such' }));
    expect([unknown.status, unknown.code]).toEqual([404, 'model_not_found']);
    expect(transcriptionCalls()).toHaveLength(before);
  });

  it('a transcription model on chat completions is refused, naming the route to call', async () => {
    const err = await sdkError(
      client.chat.completions.create({ model: 'whisper', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect([err.status, err.code, err.param]).toEqual([400, 'capability_violation', 'model']);
    expect(err.message).toContain('/v1/compat/audio/transcriptions');
  });

  it('413 payload_too_large for a file over the limit; 400 invalid_media for a file that is not audio', async () => {
    const before = transcriptionCalls().length;
    const big = await sdkError(client.audio.transcriptions.create({ file: await file(makeWav(10)), model: 'whisper' }));
    expect([big.status, big.code, big.type]).toEqual([413, 'payload_too_large', 'invalid_request_error']);
    const notAudio = await sdkError(
      client.audio.transcriptions.create({
        file: await toFile(Buffer.from('not audio at all'), 'x.wav'),
        model: 'whisper',
      }),
    );
    expect([notAudio.status, notAudio.code]).toEqual([400, 'invalid_media']);
    expect(transcriptionCalls()).toHaveLength(before);
  });

  it('an upstream failure is a 502 and releases the hold', async () => {
    const key = await lab.app.createKey('speech-fail');
    await lab.app.container.services.accounts.addCredits('speech-fail', 0.005);
    lab.upstream.next({ kind: 'error', status: 500 });
    const err = await sdkError(clientFor(key).audio.transcriptions.create({ file: await file(), model: 'whisper' }));
    expect([err.status, err.code]).toEqual([502, 'upstream_error']);
    // The hold is back: the whole balance pays the next call.
    const reply = await clientFor(key).audio.transcriptions.create({ file: await file(), model: 'whisper' });
    expect(reply.text).toBe(TRANSCRIPT);
    expect(await balanceOf('speech-fail')).toBe(0);
  });

  it('audio.transcription extraction reads the speech on the transcription model, in timed segments', async () => {
    const key = lab.app.ownerKey;
    const uploaded = await uploadFile(lab.app.url, key, makeWav(4.5), { filename: 'memo.wav' });
    expect(uploaded.status).toBe(201);
    const { id } = (await uploaded.json()) as { id: string };
    const before = transcriptionCalls().length;
    const res = await call(`${lab.app.url}/v1/audio/generate`, {
      key,
      json: { file_id: id, domain: 'audio.transcription', batch: false },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      response: {
        metadata: { duration: number };
        segments: { start_time: number; end_time: number; content: string }[];
      };
      usage: { message: string };
    };
    expect(body.response.metadata.duration).toBeCloseTo(4.5, 1);
    expect(body.response.segments).toEqual(
      SCRIPTED_SEGMENTS.map((s) => ({ start_time: s.start, end_time: s.end, content: s.text })),
    );
    expect(body.usage.message).toMatch(/^Transcribed by whisper; 2 timed segments; 5 s of audio heard\./);
    const sent = transcriptionCalls()[before]!.body;
    expect(sent).toMatchObject({ model: WHISPER_UPSTREAM, response_format: 'verbose_json' });
    expect(sent['timestamp_granularities[]']).toBe('segment');
  });

  it('the agent tool transcribe_audio returns the timed transcript; without a model it fails saying so', async () => {
    const key = lab.app.ownerKey;
    const uploaded = await uploadFile(lab.app.url, key, makeWav(3), { filename: 'voice-note.wav' });
    const { id } = (await uploaded.json()) as { id: string };
    const mcp = await connectMcp(lab.app.url, `Bearer ${key}`, { toolsets: 'agent_tools' });
    try {
      const result = (await mcp.callTool({ name: 'transcribe_audio', arguments: { audio: id } })) as CallToolResult;
      expect(toolOutput(result)).toEqual({
        model: 'whisper',
        text: TRANSCRIPT,
        segments: SCRIPTED_SEGMENTS.map((s) => ({ start_s: s.start, end_s: s.end, text: s.text })),
        // Billed to the caller like the route: 3 s at $0.001 a second.
        billed_seconds: 3,
        cost_dollars: 0.003,
      });
      expect((transcriptionCalls().at(-1)!.body.file as { filename: string }).filename).toBe('voice-note.wav');
    } finally {
      await mcp.close();
    }
    // An app whose models file names no transcription model.
    const bare = await startTestApp();
    try {
      const file = await uploadFile(bare.url, bare.ownerKey, makeWav(1), { filename: 'a.wav' });
      const fileId = ((await file.json()) as { id: string }).id;
      const client = await connectMcp(bare.url, `Bearer ${bare.ownerKey}`, { toolsets: 'agent_tools' });
      try {
        const failed = (await client.callTool({
          name: 'transcribe_audio',
          arguments: { audio: fileId },
        })) as CallToolResult;
        expect(String(toolError(failed).message)).toContain('No transcription model is configured');
      } finally {
        await client.close();
      }
    } finally {
      await bare.close();
    }
  });

  it('lists the model with its mode and per-minute price', async () => {
    const listed = (await client.models.list()).data as unknown as Record<string, unknown>[];
    const whisper = listed.find((m) => m.id === 'whisper');
    expect(whisper).toMatchObject({
      mode: 'transcription',
      pricing: { prompt: null, completion: null, per_minute: PER_MINUTE },
      capabilities: { supported_input_types: ['audio'] },
      supported_parameters: ['language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities'],
    });
    expect(listed.find((m) => m.id === 'lab-chat')).toMatchObject({ mode: 'chat' });
  });
});
