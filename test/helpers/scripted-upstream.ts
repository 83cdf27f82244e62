/**
 * A scripted OpenAI-compatible server on 127.0.0.1:0, standing in for vLLM / Ollama / OpenAI in tests.
 *
 * Each request takes the next queued script (`next`), else its model's script (`forModel`), else a default (a
 * short reply, or deterministic embeddings). Scripts cover fixed replies, streams with delays (before the first
 * chunk and between chunks), keep-alive comments, failures mid-stream (dropped connection or an error event), HTTP
 * errors, tool calls (whole, or streamed in fragments), chunks held until the test releases them, embeddings, audio
 * transcriptions (`/audio/transcriptions`, a multipart form, answered in each OpenAI response format) and a server
 * that never answers. Every request is recorded, including whether the client hung up before the reply
 * finished, so tests can assert that deadlines and disconnects reach the upstream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { hearTones } from './tone-speech';

export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string;
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A raw `tool_calls` delta: a fragment of the call at `index` (its id and name, or a piece of its arguments). */
export interface ScriptedToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

/** One streamed piece: text, a tool call, and how long to wait before sending it. */
export type ScriptedChunk =
  | string
  | {
      content?: string;
      toolCalls?: ScriptedToolCall[];
      /** Tool calls sent in fragments, as real servers stream them (joined by index in a non-streamed reply). */
      toolCallDeltas?: ScriptedToolCallDelta[];
      delayMs?: number;
      /** Streams only: wait for this (a promise the test settles) before sending the chunk, unless the client leaves. */
      waitFor?: Promise<unknown>;
    };

export type UpstreamScript =
  /** A whole answer; streamed as role + content + finish chunks when the request asks for a stream. */
  | {
      kind: 'reply';
      content?: string;
      toolCalls?: ScriptedToolCall[];
      usage?: ScriptedUsage;
      finishReason?: string;
      delayMs?: number;
      /** Answer only once this (a promise the test settles) is settled, unless the client leaves first. */
      waitFor?: Promise<unknown>;
    }
  /** A stream; a non-streaming request gets the chunks joined into one reply. */
  | {
      kind: 'stream';
      chunks: ScriptedChunk[];
      /** Wait before the first chunk (after the headers). */
      firstChunkDelayMs?: number;
      /** Default wait between chunks. */
      chunkDelayMs?: number;
      /** Send `: keep-alive` comments this often while waiting for the first chunk. */
      pingEveryMs?: number;
      /** After this many chunks, fail: drop the connection or send an error event then `[DONE]`. */
      failAfter?: number;
      failWith?: 'disconnect' | 'error-event';
      usage?: ScriptedUsage;
      /** Send no usage chunk even when the request asks for one (as some servers do). */
      omitUsage?: boolean;
      /** Send `data: [DONE]` at the end (default true). */
      done?: boolean;
    }
  /** Exactly these `data:` payloads, one event each, then `[DONE]` (for chunks shaped as a real server shapes them). */
  | { kind: 'raw-stream'; events: string[] }
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }
  | { kind: 'embeddings'; dimensions?: number; vectors?: number[][]; usage?: { prompt_tokens: number } }
  /**
   * An audio transcription in the form's `response_format`: `json` the text, `verbose_json` with the segments (and
   * words when `timestamp_granularities[]` asks for them), `text`, `srt` and `vtt` rendered from the segments; with
   * `stream=true` as OpenAI streams it (`transcript.text.delta` events, then `transcript.text.done`).
   */
  | {
      kind: 'transcription';
      segments?: ScriptedSegment[];
      language?: string;
      duration?: number;
      /** Hear the file's tones instead (test/helpers/tone-speech.ts): a segment per run of one frequency. */
      tones?: boolean;
      /** Answer after this long (pieces of one recording then overlap in flight). */
      delayMs?: number;
    }
  /** Accept the request and never answer. */
  | { kind: 'hang' };

/** One timed piece of a scripted transcript (seconds). */
export interface ScriptedSegment {
  start: number;
  end: number;
  text: string;
}

/** What a multipart request's file part was: its name, type and bytes (the recorded body's `file`). */
export interface RecordedFile {
  filename: string;
  mimeType: string;
  bytes: Buffer;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** True once the client closed the connection before the reply was complete. */
  closedEarly: boolean;
  /** The client's port (which process made the call: see test/helpers/socket-owner.ts). */
  remotePort: number;
  /** Settles when the exchange is over, either way. */
  closed: Promise<void>;
  /** Requests being answered when this one arrived, itself included (how many calls were in flight at once). */
  inFlight: number;
}

/** The body as JSON, or a multipart form's fields (repeated ones as arrays) and its `file` as a RecordedFile. */
async function parseBody(headers: http.IncomingHttpHeaders, raw: Buffer): Promise<Record<string, unknown>> {
  if (!(headers['content-type'] ?? '').startsWith('multipart/form-data')) {
    try {
      return JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      return {};
    }
  }
  return new Promise((resolve) => {
    const body: Record<string, unknown> = {};
    const files: Promise<void>[] = [];
    const parser = busboy({ headers });
    parser.on('field', (name, value) => {
      const before = body[name] as string | string[] | undefined;
      body[name] = before === undefined ? value : [before, value].flat();
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      files.push(
        new Promise((done) =>
          stream.on('end', () => {
            body[name] = { filename: info.filename, mimeType: info.mimeType, bytes: Buffer.concat(chunks) };
            done();
          }),
        ),
      );
    });
    parser.on('close', () => void Promise.all(files).then(() => resolve(body)));
    parser.on('error', () => resolve(body));
    parser.end(raw);
  });
}

export interface ScriptedUpstream {
  /** e.g. `http://127.0.0.1:41234/v1` */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Queue scripts for the next requests, in order (taken before model scripts). */
  next(...scripts: UpstreamScript[]): void;
  /** The script for every request naming `model` (when nothing is queued). */
  forModel(model: string, script: UpstreamScript): void;
  close(): Promise<void>;
}

export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const queue: UpstreamScript[] = [];
  const byModel = new Map<string, UpstreamScript>();
  const requests: RecordedRequest[] = [];
  let counter = 0;
  let open = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = await parseBody(req.headers, Buffer.concat(chunks));
      let settle: () => void = () => undefined;
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        closedEarly: false,
        remotePort: req.socket.remotePort ?? 0,
        closed: new Promise<void>((resolve) => (settle = resolve)),
        inFlight: (open += 1),
      };
      requests.push(record);
      res.on('close', () => {
        open -= 1;
        if (!res.writableFinished) record.closedEarly = true;
        settle();
      });
      const model = typeof body.model === 'string' ? body.model : '';
      const script = queue.shift() ?? byModel.get(model) ?? defaultScript(record.path);
      counter += 1;
      void serve(script, record, res, `chatcmpl-scripted-${counter}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    next: (...scripts) => queue.push(...scripts),
    forModel: (model, script) => byModel.set(model, script),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function defaultScript(path: string): UpstreamScript {
  if (path.endsWith('/audio/transcriptions')) return { kind: 'transcription' };
  return path.endsWith('/embeddings') ? { kind: 'embeddings' } : { kind: 'reply', content: 'ok' };
}

/** The transcript of the default transcription script: two sentences over the first four seconds. */
export const SCRIPTED_SEGMENTS: ScriptedSegment[] = [
  { start: 0, end: 1.5, text: 'Hello from the scripted upstream.' },
  { start: 1.5, end: 4, text: 'This is the second sentence.' },
];

/** `00:00:01,500` (SRT) or `00:00:01.500` (VTT). */
function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const hms = `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}`;
  return `${hms}${separator}${pad(ms % 1000, 3)}`;
}

function transcription(
  res: http.ServerResponse,
  script: Extract<UpstreamScript, { kind: 'transcription' }>,
  body: Record<string, unknown>,
) {
  const file = body.file as RecordedFile | undefined;
  const segments = script.tones && file ? hearTones(file.bytes) : (script.segments ?? SCRIPTED_SEGMENTS);
  const text = segments.map((s) => s.text).join(' ');
  const format = typeof body.response_format === 'string' ? body.response_format : 'json';
  const granularities = [body['timestamp_granularities[]'] ?? []].flat();
  const plain = (type: string, out: string) => {
    res.writeHead(200, { 'content-type': `${type}; charset=utf-8` });
    res.end(out);
  };
  if (body.stream === 'true') {
    // OpenAI's transcription stream: a delta event per segment, then the whole text; no `[DONE]`.
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const s of segments) {
      res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: s.text })}\n\n`);
    }
    res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text })}\n\n`);
    return;
  }
  switch (format) {
    case 'text':
      return plain('text/plain', `${text}\n`);
    case 'srt':
      return plain(
        'text/plain',
        segments.map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${s.text}\n`).join('\n'),
      );
    case 'vtt':
      return plain(
        'text/vtt',
        `WEBVTT\n\n${segments.map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${s.text}\n`).join('\n')}`,
      );
    case 'verbose_json': {
      const words = segments.flatMap((s) => {
        const parts = s.text.split(' ');
        const step = (s.end - s.start) / parts.length;
        return parts.map((word, i) => ({ word, start: s.start + i * step, end: s.start + (i + 1) * step }));
      });
      json(res, {
        task: 'transcribe',
        language: script.language ?? 'english',
        duration: script.duration ?? segments[segments.length - 1]?.end ?? 0,
        text,
        segments: segments.map((s, id) => ({ id, seek: 0, start: s.start, end: s.end, text: s.text, temperature: 0 })),
        ...(granularities.includes('word') ? { words } : {}),
      });
      return;
    }
    default:
      json(res, { text });
  }
}

async function serve(script: UpstreamScript, req: RecordedRequest, res: http.ServerResponse, id: string) {
  const model = typeof req.body.model === 'string' ? req.body.model : '';
  const wantsStream = req.body.stream === true;
  const includeUsage = (req.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  switch (script.kind) {
    case 'hang':
      return;
    case 'raw-stream':
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const data of script.events) res.write(`data: ${data}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    case 'error':
      if (!(await pause(script.delayMs ?? 0, res))) return;
      res.writeHead(script.status, { 'content-type': 'application/json', ...script.headers });
      res.end(JSON.stringify(script.body ?? { error: { message: `scripted ${script.status}`, type: 'error' } }));
      return;
    case 'transcription':
      if (!(await pause(script.delayMs ?? 0, res))) return;
      return transcription(res, script, req.body);
    case 'embeddings': {
      const inputs = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
      const dims = script.dimensions ?? 8;
      const data = inputs.map((_, i) => ({
        object: 'embedding',
        index: i,
        embedding: script.vectors?.[i] ?? Array.from({ length: dims }, (_, d) => ((i + 1) * (d + 1)) / 100),
      }));
      const tokens = script.usage?.prompt_tokens ?? inputs.length;
      json(res, { object: 'list', model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } });
      return;
    }
    case 'reply': {
      if (script.waitFor && !(await released(script.waitFor, res))) return;
      if (!(await pause(script.delayMs ?? 0, res))) return;
      const chunks: ScriptedChunk[] = [
        { content: script.content ?? '', ...(script.toolCalls && { toolCalls: script.toolCalls }) },
      ];
      if (wantsStream) {
        await stream(
          res,
          id,
          model,
          { kind: 'stream', chunks, ...(script.usage && { usage: script.usage }) },
          includeUsage,
        );
      } else {
        json(res, completion(id, model, chunks, script.usage, script.finishReason));
      }
      return;
    }
    case 'stream':
      if (wantsStream) await stream(res, id, model, script, includeUsage);
      else if (await pause((script.firstChunkDelayMs ?? 0) + (script.chunkDelayMs ?? 0) * script.chunks.length, res)) {
        json(res, completion(id, model, script.chunks, script.usage, undefined));
      }
      return;
  }
}

async function stream(
  res: http.ServerResponse,
  id: string,
  model: string,
  script: Extract<UpstreamScript, { kind: 'stream' }>,
  includeUsage: boolean,
) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frame = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
    );
  const firstDelay = script.firstChunkDelayMs ?? 0;
  if (script.pingEveryMs) {
    for (let waited = 0; waited < firstDelay; waited += script.pingEveryMs) {
      if (!(await pause(Math.min(script.pingEveryMs, firstDelay - waited), res))) return;
      res.write(': keep-alive\n\n');
    }
  } else if (!(await pause(firstDelay, res))) return;

  let toolIndex = 0;
  let calledTools = false;
  for (const [i, raw] of script.chunks.entries()) {
    const chunk: Exclude<ScriptedChunk, string> = typeof raw === 'string' ? { content: raw } : raw;
    if (i > 0 && !(await pause(chunk.delayMs ?? script.chunkDelayMs ?? 0, res))) return;
    if (chunk.waitFor && !(await released(chunk.waitFor, res))) return;
    if (script.failAfter === i) return fail(res, script.failWith);
    const delta: Record<string, unknown> = i === 0 ? { role: 'assistant' } : {};
    if (chunk.content !== undefined) delta.content = chunk.content;
    if (chunk.toolCalls) delta.tool_calls = chunk.toolCalls.map((t) => toolCall(t, toolIndex++));
    if (chunk.toolCallDeltas) delta.tool_calls = chunk.toolCallDeltas.map(toolCallDelta);
    calledTools ||= delta.tool_calls !== undefined;
    frame(delta, null);
  }
  if (script.failAfter !== undefined && script.failAfter >= script.chunks.length) return fail(res, script.failWith);
  frame({}, calledTools ? 'tool_calls' : 'stop');
  if (includeUsage && script.omitUsage !== true) {
    const usage = withTotal(script.usage ?? { prompt_tokens: 1, completion_tokens: script.chunks.length });
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage })}\n\n`,
    );
  }
  if (script.done !== false) res.write('data: [DONE]\n\n');
  res.end();
}

function fail(res: http.ServerResponse, how: 'disconnect' | 'error-event' = 'disconnect') {
  if (how === 'disconnect') {
    // Let what was written reach the client first, then drop the connection mid-body.
    res.write('', () => setTimeout(() => res.socket?.destroy(), 10));
    return;
  }
  res.write(`data: ${JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } })}\n\n`);
  res.end('data: [DONE]\n\n');
}

function completion(
  id: string,
  model: string,
  chunks: ScriptedChunk[],
  usage: ScriptedUsage | undefined,
  finishReason: string | undefined,
) {
  const parts = chunks.map((c) => (typeof c === 'string' ? { content: c } : c));
  const joined: ScriptedToolCall[] = [];
  for (const d of parts.flatMap((p) => p.toolCallDeltas ?? [])) {
    const call = (joined[d.index] ??= { name: '', arguments: '' });
    if (d.id !== undefined) call.id = d.id;
    call.name += d.name ?? '';
    call.arguments += d.arguments ?? '';
  }
  const toolCalls = [...parts.flatMap((p) => p.toolCalls ?? []), ...joined.filter(Boolean)];
  const message: Record<string, unknown> = { role: 'assistant', content: parts.map((p) => p.content ?? '').join('') };
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map((t, i) => toolCall(t, i));
  return {
    id,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, finish_reason: finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop') }],
    usage: withTotal(usage ?? { prompt_tokens: 1, completion_tokens: parts.length }),
  };
}

function toolCall(t: ScriptedToolCall, index: number) {
  return { index, id: t.id ?? `call_${index}`, type: 'function', function: { name: t.name, arguments: t.arguments } };
}

function toolCallDelta(d: ScriptedToolCallDelta) {
  const fn: Record<string, string> = {};
  if (d.name !== undefined) fn.name = d.name;
  if (d.arguments !== undefined) fn.arguments = d.arguments;
  return { index: d.index, ...(d.id !== undefined && { id: d.id, type: 'function' }), function: fn };
}

function withTotal(u: ScriptedUsage) {
  return { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };
}

function json(res: http.ServerResponse, body: unknown) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Waits `ms`, or less if the client goes away; resolves false when it did. */
function pause(ms: number, res: http.ServerResponse): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(!res.destroyed);
    }, ms);
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    res.once('close', onClose);
  });
}

/** Waits for `gate`, or less if the client goes away; resolves false when it did. */
function released(gate: Promise<unknown>, res: http.ServerResponse): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = () => resolve(false);
    res.once('close', onClose);
    void gate.then(
      () => {
        res.off('close', onClose);
        resolve(!res.destroyed);
      },
      () => undefined,
    );
  });
}
