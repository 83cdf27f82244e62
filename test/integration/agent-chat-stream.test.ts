/**
 * Agent chat streams the planner's final answer as it is written (`stream: true` on `prism-orion-1`), through the
 * official `openai` SDK and LangChain's ChatOpenAI, against a scripted planner upstream: the text reaches the client
 * while the upstream is still writing it (the upstream waits for the test to have seen the first chunk), the stored
 * history equals what was streamed byte for byte, a JSON reply is sent whole after the schema check, and failures
 * before and after the first text (the upstream cut, the run's deadline), and a client that leaves, bill nothing and
 * give the hold back; a planner stream without usage is counted from its characters.
 */
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

type Chunk = OpenAI.ChatCompletionChunk & { session_id?: string };

/** Every chunk of a stream, in order. */
async function collect(stream: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The text the chunks carry, joined. */
const textOf = (chunks: Chunk[]): string => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/** Longer than the reply gate's hold-back (120 characters), so it is shown as soon as it arrives. */
const OPENING =
  'The document.invoice domain reads invoices: the vendor, the invoice number and date, the line items with ' +
  'their amounts, and the totals. ';
const MIDDLE = 'It takes images and PDF documents. ';
const CLOSING = 'Ask me to extract one whenever you like.';

describe('agent chat streams the final answer as the planner writes it', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    lab = await startUpstreamApp([CHAT_PLANNER], { provider: 'vLLM' });
    ({ app, upstream } = lab);
    key = await app.createKey('stream-org');
    await app.container.services.accounts.addCredits('stream-org', 5);
    client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
  });
  afterAll(() => lab.close());

  const balanceOf = async (org: string): Promise<number> => {
    const { orgId } = await app.container.services.accounts.addCredits(org, 0);
    return app.container.stores.wallets.balance(orgId);
  };

  const storedReplies = async (sessionId: string): Promise<string[]> => {
    const res = await call(`${app.url}/v1/chat/messages?session_id=${encodeURIComponent(sessionId)}`, { key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { messages: { role: string; content: string }[] };
    return body.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
  };

  /** A planner round that calls lookup_hub_domain, its name and arguments streamed in fragments. */
  const toolRound = (preamble: string) => ({
    kind: 'stream' as const,
    chunks: [
      { content: preamble },
      { toolCallDeltas: [{ index: 0, id: 'call_hub', name: 'lookup_hub', arguments: '{"dom' }] },
      { toolCallDeltas: [{ index: 0, name: '_domain', arguments: 'ain": "document.in' }] },
      { toolCallDeltas: [{ index: 0, arguments: 'voice"}' }] },
    ],
    usage: { prompt_tokens: 1000, completion_tokens: 20 },
  });

  it('after a tool round, the answer arrives in pieces while the upstream writes it; history equals the stream', async () => {
    let release: () => void = () => undefined;
    const lastChunks = new Promise<void>((resolve) => (release = resolve));
    upstream.next(toolRound('Let me look that up.'), {
      kind: 'stream',
      // The rest of the answer leaves the upstream only once the client has read its first text: a server that
      // held the answer back until the run was over would never get there (and the test would time out).
      chunks: [OPENING, { content: MIDDLE, waitFor: lastChunks }, CLOSING],
      usage: { prompt_tokens: 2000, completion_tokens: 60 },
    });
    const seen = upstream.requests.length;
    const before = await balanceOf('stream-org');

    const stream = await client.chat.completions.create({
      model: 'prism-orion-1',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'What does the invoice domain read?' }],
    });
    const chunks: Chunk[] = [];
    let upstreamRequestsAtFirstText = -1;
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (upstreamRequestsAtFirstText < 0 && chunk.choices[0]?.delta.content) {
        upstreamRequestsAtFirstText = upstream.requests.length - seen;
        release();
      }
    }
    // The first text came during the second planner call, before its last chunks were sent.
    expect(upstreamRequestsAtFirstText).toBe(2);
    const texts = chunks.map((c) => c.choices[0]?.delta.content ?? '').filter((t) => t !== '');
    expect(texts.length).toBeGreaterThan(1);
    expect(texts[0]).toBe(OPENING);
    const streamed = texts.join('');
    // The preamble of the tool round (shorter than the hold-back) is not part of the answer.
    expect(streamed).toBe(OPENING + MIDDLE + CLOSING);

    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const sessionId = chunks[0]?.session_id ?? '';
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    for (const chunk of chunks) expect(chunk.session_id).toBe(sessionId);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    // 3,000 prompt tokens at $2/M + 80 completion tokens at $4/M = $0.00632.
    expect(last?.usage).toMatchObject({ prompt_tokens: 3000, completion_tokens: 80, total_tokens: 3080 });
    expect(last?.usage).toMatchObject({ cost: 0.00632, steps: 3 });
    expect(before - (await balanceOf('stream-org'))).toBe(6320);

    expect(await storedReplies(sessionId)).toEqual([streamed]);

    const calls = upstream.requests.slice(seen).map((r) => r.body);
    expect(calls).toHaveLength(2);
    for (const body of calls) expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    // The fragments were assembled into one call: the tool ran with the whole name and arguments.
    const tool = (calls[1]?.messages as { role: string; content: string }[]).find((m) => m.role === 'tool');
    expect(JSON.parse(tool?.content ?? '{}')).toMatchObject({ found: true, domain: 'document.invoice' });
  });

  it('text a tool round showed stays part of the reply, so the history still equals the stream', async () => {
    const preamble = `${OPENING}I will look the domain up to be sure.`;
    upstream.next(toolRound(preamble), {
      kind: 'stream',
      chunks: [MIDDLE, CLOSING],
      usage: { prompt_tokens: 200, completion_tokens: 10 },
    });
    const stream = await client.chat.completions.create({
      model: 'prism-orion-1',
      stream: true,
      messages: [{ role: 'user', content: 'And the invoice domain?' }],
    });
    const chunks = await collect(stream);
    const streamed = textOf(chunks);
    expect(streamed).toBe(`${preamble}\n\n${MIDDLE}${CLOSING}`);
    expect(await storedReplies(chunks[0]?.session_id ?? '')).toEqual([streamed]);
  });

  it('a call without stream: true on the same scripted upstream is answered whole by a non-streamed planner', async () => {
    upstream.next(toolRound('Let me look that up.'), {
      kind: 'stream',
      chunks: [OPENING, MIDDLE, CLOSING],
      usage: { prompt_tokens: 2000, completion_tokens: 60 },
    });
    const seen = upstream.requests.length;
    const data = await client.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'What does the invoice domain read?' }],
    });
    expect(data.choices[0]?.message.content).toBe(OPENING + MIDDLE + CLOSING);
    expect(data.usage).toMatchObject({ prompt_tokens: 3000, completion_tokens: 80 });
    const calls = upstream.requests.slice(seen).map((r) => r.body);
    expect(calls).toHaveLength(2);
    for (const body of calls) expect(body.stream).toBeUndefined();
    const sessionId = (data as unknown as { session_id: string }).session_id;
    expect(await storedReplies(sessionId)).toEqual([OPENING + MIDDLE + CLOSING]);
  });

  it('a JSON reply is checked against the schema and sent whole, in one content chunk', async () => {
    upstream.next(
      { kind: 'stream', chunks: ['The total is ', '26.22.'], usage: { prompt_tokens: 100, completion_tokens: 5 } },
      { kind: 'stream', chunks: ['{"total": ', '26.22}'], usage: { prompt_tokens: 150, completion_tokens: 6 } },
    );
    const seen = upstream.requests.length;
    const stream = await client.chat.completions.create({
      model: 'prism-orion-1',
      stream: true,
      messages: [{ role: 'user', content: 'The total of 20 and 6.22, please.' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'total',
          schema: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] },
        },
      },
    });
    const chunks = await collect(stream);
    const texts = chunks.map((c) => c.choices[0]?.delta.content ?? '').filter((t) => t !== '');
    expect(texts).toEqual(['{"total":26.22}']);
    // The first answer was not JSON: the schema check sent the planner back, and none of it was streamed.
    const calls = upstream.requests.slice(seen).map((r) => r.body);
    expect(calls).toHaveLength(2);
    for (const body of calls) expect(body.stream).toBeUndefined();
    expect(await storedReplies(chunks[0]?.session_id ?? '')).toEqual(['{"total":26.22}']);
  });

  it('an upstream that fails before any text is a JSON error with its status; the wallet is unchanged', async () => {
    upstream.next({ kind: 'error', status: 400, body: { error: { message: 'bad planner request' } } });
    const before = await balanceOf('stream-org');
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: { model: 'prism-orion-1', stream: true, messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(JSON.stringify(await res.json())).toContain('upstream_error');
    expect(await balanceOf('stream-org')).toBe(before);
  });

  it('an upstream cut after the first text ends the stream with the error frame; nothing is billed or stored', async () => {
    const opened = await client.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const sessionId = (opened as unknown as { session_id: string }).session_id;
    upstream.next({ kind: 'stream', chunks: [OPENING, MIDDLE, CLOSING], failAfter: 2, failWith: 'disconnect' });
    const before = await balanceOf('stream-org');
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key,
      json: {
        model: 'prism-orion-1',
        stream: true,
        session_id: sessionId,
        messages: [{ role: 'user', content: 'Tell me about invoices.' }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-session-id')).toBe(sessionId);
    const frames = (await res.text())
      .split('\n\n')
      .filter((f) => f.startsWith('data: '))
      .map((f) => f.slice('data: '.length));
    expect(frames.at(-1)).toBe('[DONE]');
    const error = JSON.parse(frames.at(-2) ?? '{}') as { error?: Record<string, unknown> };
    expect(error.error).toMatchObject({ type: 'upstream_error', code: 'upstream_error', param: null });
    expect(typeof error.error?.request_id).toBe('string');
    const texts = frames
      .slice(0, -2)
      .map((f) => JSON.parse(f) as Chunk)
      .map((c) => c.choices[0]?.delta.content ?? '');
    expect(texts.join('')).toBe(OPENING + MIDDLE);
    expect(await balanceOf('stream-org')).toBe(before);
    // The thread keeps what it had: the partial answer is not stored as a finished turn.
    expect(await storedReplies(sessionId)).toEqual(['ok']);
  });

  it('a client that leaves mid-stream stops the run and gets its hold back; nothing is billed', async () => {
    // At most about $0.02 is held for one such call: $0.03 covers one hold, not two.
    const tightKey = await app.createKey('stream-tight');
    await app.container.services.accounts.addCredits('stream-tight', 0.03);
    const tight = new OpenAI({ apiKey: tightKey, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
    const body = {
      model: 'prism-orion-1',
      max_tokens: 1000,
      messages: [{ role: 'user' as const, content: 'Tell me about invoices.' }],
    };
    const before = await balanceOf('stream-tight');
    const never = new Promise<void>(() => undefined);
    upstream.next({ kind: 'stream', chunks: [OPENING, { content: MIDDLE, waitFor: never }] });
    const seen = upstream.requests.length;
    const controller = new AbortController();
    const stream = await tight.chat.completions.create({ ...body, stream: true }, { signal: controller.signal });
    let sawText = false;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) {
          sawText = true;
          // While the turn runs its hold is taken: a second call does not fit in the wallet.
          await expect(tight.chat.completions.create(body)).rejects.toMatchObject({ status: 402 });
          controller.abort();
        }
      }
    } catch {
      // The SDK may raise the abort or just end the iteration.
    }
    expect(sawText).toBe(true);
    const planning = upstream.requests[seen];
    await planning?.closed;
    expect(planning?.closedEarly).toBe(true);

    // The hold is given back once the cancelled run has unwound: a call needing the whole wallet then fits.
    upstream.next({ kind: 'reply', content: 'Short.', usage: { prompt_tokens: 10, completion_tokens: 2 } });
    let reply: OpenAI.ChatCompletion | null = null;
    for (let attempt = 0; reply === null; attempt += 1) {
      try {
        reply = await tight.chat.completions.create(body);
      } catch (error) {
        expect(error).toMatchObject({ status: 402 });
        if (attempt > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    expect(reply.choices[0]?.message.content).toBe('Short.');
    // Only the second call was billed: $0.001, the minimum.
    expect(before - (await balanceOf('stream-tight'))).toBe(1000);
  });

  it('an upstream stream without usage is counted from the characters, as gateway streams are', async () => {
    upstream.next({ kind: 'stream', chunks: [OPENING, MIDDLE, CLOSING], omitUsage: true });
    const stream = await client.chat.completions.create({
      model: 'prism-orion-1',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'What does the invoice domain read?' }],
    });
    const chunks = await collect(stream);
    const usage = chunks.at(-1)?.usage;
    expect(usage?.completion_tokens).toBe(Math.ceil((OPENING + MIDDLE + CLOSING).length / 4));
    // The transcript the planner was sent (system prompt, task), four characters to a token.
    const sent = upstream.requests.at(-1)?.body.messages as { content: string }[];
    expect(usage?.prompt_tokens).toBe(Math.ceil(sent.map((m) => m.content).join('\n').length / 4));
  });

  it('the deterministic planner (prism-orion-2 has no upstream here) answers whole at the end of the run', async () => {
    const stream = await client.chat.completions.create({
      model: 'prism-orion-2',
      stream: true,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const chunks = await collect(stream);
    const streamed = textOf(chunks);
    expect(streamed).toContain('deterministic planner');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(await storedReplies(chunks[0]?.session_id ?? '')).toEqual([streamed]);
  });

  it('LangChain ChatOpenAI.stream gets the answer in pieces', async () => {
    upstream.next({
      kind: 'stream',
      chunks: [OPENING, MIDDLE, CLOSING],
      usage: { prompt_tokens: 12, completion_tokens: 30 },
    });
    const model = new ChatOpenAI({
      model: 'prism-orion-1',
      apiKey: key,
      configuration: { baseURL: `${app.url}/v1/openai` },
      maxRetries: 0,
    });
    const pieces: string[] = [];
    for await (const chunk of await model.stream('What does the invoice domain read?')) pieces.push(chunk.text);
    expect(pieces.filter((p) => p !== '').length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(OPENING + MIDDLE + CLOSING);
  });
});

describe('a streamed agent turn that misses its deadline after the first text', () => {
  let lab: UpstreamApp;

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [{ id: 'prism-orion-1', upstreamModel: 'planner-llm', pricing: { prompt: 2.0, completion: 4.0 } }],
      { provider: 'vLLM', env: { PRISM_AGENT_DEADLINE_S: '2' } },
    );
  });
  afterAll(() => lab.close());

  it('ends with the error frame naming the deadline; the upstream call is cut and nothing is billed', async () => {
    const { app, upstream } = lab;
    const key = await app.createKey('deadline-org');
    const { orgId } = await app.container.services.accounts.addCredits('deadline-org', 1);
    const before = await app.container.stores.wallets.balance(orgId);
    // The planner shows its first text, then never finishes its answer.
    upstream.next({ kind: 'stream', chunks: [OPENING, { content: MIDDLE, waitFor: new Promise(() => undefined) }] });
    const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'prism-orion-1',
      stream: true,
      messages: [{ role: 'user', content: 'Tell me about invoices.' }],
    });
    const received: string[] = [];
    let failure: unknown = null;
    try {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    } catch (error) {
      failure = error;
    }
    expect(failure).toMatchObject({ error: { code: 'upstream_error' } });
    expect((failure as { error: { message: string } }).error.message).toContain('deadline');
    expect(received.join('')).toBe(OPENING);
    const planning = upstream.requests.at(-1);
    await planning?.closed;
    expect(planning?.closedEarly).toBe(true);
    expect(await app.container.stores.wallets.balance(orgId)).toBe(before);
  });
});
