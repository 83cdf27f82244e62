/**
 * Agent chat over the OpenAI-compatible routes, through the official `openai` SDK and LangChain's ChatOpenAI (base
 * URL only): `prism-orion-1` is planned by a scripted upstream (the tool calls it returns run against the real
 * tools), each call belongs to a thread whose history the next turn's planner sees, threads are listed and their
 * history read under the spec's access rules (each rule by its own test), a skill is created from a chat, and
 * `prism-orion-2` without an upstream answers through the deterministic planner, saying what it cannot do.
 */
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { renderReceiptImage } from '../helpers/media-fixtures';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { call, uploadFile, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

interface ThreadWire {
  session_id: string;
  title: string;
  model: string;
  is_public: boolean;
  has_session_token: boolean;
  message_count: number;
}
interface HistoryWire extends ThreadWire {
  messages: { index: number; role: string; content: string; attachments: { type: string; source: string }[] }[];
}

/** The `openai` SDK's create params do not name Prism's extra keys; they go in the body as they are. */
type Extra = Record<string, unknown>;

describe('agent chat on the OpenAI-compatible routes', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let sameOrgKey: string;
  let otherKey: string;
  let superKey: string;
  let client: OpenAI;
  let receiptId: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([CHAT_PLANNER], { provider: 'vLLM' });
    ({ app, upstream } = lab);
    key = await app.createKey('chat-org');
    sameOrgKey = await app.createKey('chat-org');
    otherKey = await app.createKey('chat-other');
    superKey = (await app.container.services.accounts.createKey({ org: 'chat-admin', superuser: true })).key;
    for (const org of ['chat-org', 'chat-other', 'chat-admin']) {
      await app.container.services.accounts.addCredits(org, 5);
    }
    const res = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    receiptId = ((await res.json()) as { id: string }).id;
    client = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
  });
  afterAll(() => lab.close());

  const get = (url: string, as?: string, headers: Record<string, string> = {}) =>
    call(`${app.url}${url}`, { ...(as === undefined ? {} : { key: as }), headers });

  /** A one-turn thread of `as` (the upstream's default reply), with the call's extra thread fields. */
  async function thread(as: string, extra: Extra = {}): Promise<string> {
    const res = await call(`${app.url}/v1/compat/chat/completions`, {
      key: as,
      json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'Hello there' }], ...extra },
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { session_id: string }).session_id;
  }

  const history = (sessionId: string, as?: string, token?: string) =>
    get(
      `/v1/chat/messages?session_id=${encodeURIComponent(sessionId)}`,
      as,
      token === undefined ? {} : { 'X-Session-Token': token },
    );

  describe('a multi-turn chat with the openai SDK', () => {
    let sessionId: string;

    it('turn 1: the planner calls a tool on the attached image and the reply names the new thread', async () => {
      const seen = upstream.requests.length;
      upstream.next(
        {
          kind: 'reply',
          toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image: receiptId }) }],
          usage: { prompt_tokens: 1000, completion_tokens: 100 },
        },
        {
          kind: 'reply',
          content: 'The receipt is from GREENLEAF GROCERY LTD.',
          usage: { prompt_tokens: 2000, completion_tokens: 50 },
        },
      );
      const { data, response } = await client.chat.completions
        .create({
          model: 'prism-orion-1',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'file', file: { file_id: receiptId } },
                { type: 'text', text: 'Which store issued this receipt?' },
              ],
            },
          ],
        })
        .withResponse();
      expect(data.choices[0]?.message).toMatchObject({
        role: 'assistant',
        content: 'The receipt is from GREENLEAF GROCERY LTD.',
      });
      sessionId = (data as unknown as { session_id: string }).session_id;
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers.get('x-session-id')).toBe(sessionId);
      // 3,000 prompt tokens at $2/M + 150 completion tokens at $4/M = $0.0066.
      expect(data.usage).toMatchObject({ prompt_tokens: 3000, completion_tokens: 150, total_tokens: 3150 });
      expect(data.usage).toMatchObject({ cost: 0.0066, steps: 3, planned_by: 'prism-orion-1', message: null });

      const calls = upstream.requests.slice(seen);
      expect(calls).toHaveLength(2);
      const first = calls[0]?.body as { model: string; tools: { function: { name: string } }[]; messages: unknown[] };
      expect(first.model).toBe('planner-llm');
      expect(first.tools.map((t) => t.function.name)).toContain('ocr_image');
      expect(JSON.stringify(first.messages)).toContain(receiptId);
      const second = calls[1]?.body as { messages: { role: string; content: string }[] };
      expect(second.messages.find((m) => m.role === 'tool')?.content).toContain('GREENLEAF GROCERY');
    });

    it('turn 2: only the new message is sent with session_id; the planner sees the stored history', async () => {
      const seen = upstream.requests.length;
      upstream.next({
        kind: 'reply',
        content: 'It was paid in cash.',
        usage: { prompt_tokens: 500, completion_tokens: 9 },
      });
      const data = await client.chat.completions.create({
        model: 'prism-orion-1:auto',
        messages: [{ role: 'user', content: 'How was it paid?' }],
        session_id: sessionId,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra);
      expect(data.choices[0]?.message.content).toBe('It was paid in cash.');
      expect((data as unknown as { session_id: string }).session_id).toBe(sessionId);
      const prompt = JSON.stringify(upstream.requests[seen]?.body.messages);
      expect(prompt).toContain('Which store issued this receipt?');
      expect(prompt).toContain('The receipt is from GREENLEAF GROCERY LTD.');
      expect(prompt).toContain('How was it paid?');
      // The image of turn 1 is still an input the tools can read.
      expect(prompt).toContain(receiptId);
    });

    it('turn 3 streams: session_id in every chunk, the usage chunk last; a resent conversation is not stored twice', async () => {
      upstream.next({
        kind: 'reply',
        content: 'Total: 26.22\nThank you.',
        usage: { prompt_tokens: 700, completion_tokens: 8 },
      });
      const stream = await client.chat.completions.create({
        model: 'prism-orion-1',
        stream: true,
        stream_options: { include_usage: true },
        session_id: sessionId,
        messages: [
          { role: 'user', content: 'Which store issued this receipt?' },
          { role: 'assistant', content: 'The receipt is from GREENLEAF GROCERY LTD.' },
          { role: 'user', content: 'How was it paid?' },
          { role: 'assistant', content: 'It was paid in cash.' },
          { role: 'user', content: 'And the total?' },
        ],
      } as OpenAI.ChatCompletionCreateParamsStreaming & Extra);
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Total: 26.22\nThank you.');
      for (const chunk of chunks) expect((chunk as unknown as { session_id: string }).session_id).toBe(sessionId);
      const last = chunks.at(-1);
      expect(last?.choices).toEqual([]);
      expect(last?.usage).toMatchObject({ prompt_tokens: 700, completion_tokens: 8, total_tokens: 708 });
    });

    it('the thread is listed, newest first, and its history reads back in order with the attachment', async () => {
      const newer = await thread(key);
      const list = (await (await get('/v1/chat', key)).json()) as ThreadWire[];
      expect(list.map((t) => t.session_id).slice(0, 2)).toEqual([newer, sessionId]);
      expect(list[1]).toMatchObject({
        title: 'Which store issued this receipt?',
        model: 'prism-orion-1',
        is_public: false,
        has_session_token: false,
        message_count: 6,
      });
      const limited = (await (await get('/v1/chat?limit=1&skip=1', key)).json()) as ThreadWire[];
      expect(limited.map((t) => t.session_id)).toEqual([sessionId]);

      const res = await history(sessionId, key);
      expect(res.status).toBe(200);
      const body = (await res.json()) as HistoryWire;
      expect(body.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Which store issued this receipt?'],
        ['assistant', 'The receipt is from GREENLEAF GROCERY LTD.'],
        ['user', 'How was it paid?'],
        ['assistant', 'It was paid in cash.'],
        ['user', 'And the total?'],
        ['assistant', 'Total: 26.22\nThank you.'],
      ]);
      expect(body.messages[0]?.attachments).toEqual([{ type: 'image', source: receiptId }]);
    });

    it('a skill is created from the chat: its history is the prompt the drafting model sees', async () => {
      const seen = upstream.requests.length;
      const res = await call(`${app.url}/v1/skills/create`, {
        key,
        json: { session_id: sessionId, name: 'receipt-chat' },
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ name: 'receipt-chat', status: 'completed' });
      const drafting = JSON.stringify(upstream.requests.slice(seen).map((r) => r.body.messages));
      expect(drafting).toContain('Which store issued this receipt?');
      expect(drafting).toContain('It was paid in cash.');
    });

    it("a skill from another organisation's private chat is a 404, like its history", async () => {
      const res = await call(`${app.url}/v1/skills/create`, { key: otherKey, json: { session_id: sessionId } });
      expect(res.status).toBe(404);
      expect(JSON.stringify(await res.json())).toContain('chat_not_found');
    });
  });

  describe('chat history access rules', () => {
    it('the owner reads their own private chat', async () => {
      expect((await history(await thread(key), key)).status).toBe(200);
    });

    it("another user of the same organisation does not read a user's private chat (404)", async () => {
      const res = await history(await thread(key), sameOrgKey);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({
        detail: { error: { type: 'not_found_error', code: 'chat_not_found' } },
      });
    });

    it('a user of another organisation does not read a private chat (404)', async () => {
      expect((await history(await thread(key), otherKey)).status).toBe(404);
    });

    it('any authenticated user reads a public chat, from any organisation', async () => {
      const id = await thread(key, { public: true });
      expect((await history(id, otherKey)).status).toBe(200);
      expect((await history(id, sameOrgKey)).status).toBe(200);
    });

    it('guests read public chats', async () => {
      const res = await history(await thread(key, { public: true }), undefined);
      expect(res.status).toBe(200);
      expect(((await res.json()) as HistoryWire).is_public).toBe(true);
    });

    it('guests do not read private chats (404)', async () => {
      expect((await history(await thread(key), undefined)).status).toBe(404);
    });

    it('a superuser reads any chat, private ones of other organisations included', async () => {
      expect((await history(await thread(key), superKey)).status).toBe(200);
    });

    it('a chat with a session token needs the matching X-Session-Token from a non-owner', async () => {
      const id = await thread(key, { public: true, session_token: 'share-secret-1' });
      expect((await history(id, otherKey)).status).toBe(404);
      expect((await history(id, otherKey, 'wrong-secret-0')).status).toBe(404);
      expect((await history(id, undefined)).status).toBe(404);
      expect((await history(id, superKey)).status).toBe(404);
      expect((await history(id, otherKey, 'share-secret-1')).status).toBe(200);
      expect((await history(id, undefined, 'share-secret-1')).status).toBe(200);
      const listed = (await (await get('/v1/chat?limit=25', key)).json()) as ThreadWire[];
      expect(listed.find((t) => t.session_id === id)?.has_session_token).toBe(true);
    });

    it('the owner of a chat with a session token reads it without the token', async () => {
      expect((await history(await thread(key, { session_token: 'owner-secret' }), key)).status).toBe(200);
    });

    it('an unknown session id is a 404', async () => {
      expect((await history('00000000-0000-4000-8000-000000000000', key)).status).toBe(404);
    });

    it("only the owner adds turns: a readable public chat is 403, another's private chat 404", async () => {
      const open = await thread(key, { public: true });
      const closed = await thread(key);
      const turn = (sessionId: string) =>
        call(`${app.url}/v1/compat/chat/completions`, {
          key: otherKey,
          json: { model: 'prism-orion-1', session_id: sessionId, messages: [{ role: 'user', content: 'Hi' }] },
        });
      expect((await turn(open)).status).toBe(403);
      expect((await turn(closed)).status).toBe(404);
    });

    it('the X-Session-Id header continues a thread like session_id', async () => {
      const id = await thread(key);
      const res = await call(`${app.url}/v1/compat/chat/completions`, {
        key,
        headers: { 'X-Session-Id': id },
        json: { model: 'prism-orion-1', messages: [{ role: 'user', content: 'Again' }] },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-session-id')).toBe(id);
      expect(((await (await history(id, key)).json()) as HistoryWire).messages).toHaveLength(4);
    });
  });

  describe('GET /v1/chat validation', () => {
    it.each(['limit=0', 'limit=26', 'skip=-1', 'limit=abc'])('%s is a 422 validation error', async (query) => {
      const res = await get(`/v1/chat?${query}`, key);
      expect(res.status).toBe(422);
      const field = query.split('=')[0];
      expect(await res.json()).toMatchObject({ detail: [{ loc: ['query', field] }] });
    });

    it('defaults to 5 threads', async () => {
      const list = (await (await get('/v1/chat', key)).json()) as ThreadWire[];
      expect(list).toHaveLength(5);
    });

    it('guests have no threads of their own to list (401)', async () => {
      expect((await get('/v1/chat')).status).toBe(401);
    });
  });

  it('prism-orion-2 without an upstream: the deterministic planner reads the image and states its limits', async () => {
    const data = await client.chat.completions.create({
      model: 'prism-orion-2',
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: receiptId } }] }],
    });
    expect(data.choices[0]?.message.content).toContain('GREENLEAF');
    expect((data.usage as unknown as { message: string }).message).toContain('deterministic planner');
    expect((data.usage as unknown as { planned_by: string }).planned_by).toBe('deterministic-planner');

    // A streamed turn of the same thread: the history says the same planner planned both turns.
    const sessionId = (data as unknown as { session_id: string }).session_id;
    const stream = await client.chat.completions.create({
      model: 'prism-orion-2',
      stream: true,
      session_id: sessionId,
      messages: [{ role: 'user', content: 'What is the total?' }],
    } as OpenAI.ChatCompletionCreateParamsStreaming & Extra);
    for await (const chunk of stream) expect(chunk.object).toBe('chat.completion.chunk');
    const res = await history(sessionId, key);
    expect(res.status).toBe(200);
    const { messages } = (await res.json()) as {
      messages: { role: string; planned_by?: string; meta?: { planned_by?: string } }[];
    };
    const plannedBy = messages.filter((m) => m.role === 'assistant').map((m) => m.planned_by ?? m.meta?.planned_by);
    expect(plannedBy).toEqual(['deterministic-planner', 'deterministic-planner']);
  });

  it('a skill named in the top-level skills key reaches the planner with its instructions', async () => {
    const created = await call(`${app.url}/v1/skills/create`, {
      key,
      json: { name: 'polite-replies', prompt: 'Always answer in one polite sentence that ends with the word Cheers.' },
    });
    expect(created.status).toBe(201);
    const seen = upstream.requests.length;
    upstream.next({
      kind: 'reply',
      content: 'Happy to help. Cheers',
      usage: { prompt_tokens: 40, completion_tokens: 5 },
    });
    const data = await client.chat.completions.create({
      model: 'prism-orion-1:pro',
      messages: [{ role: 'user', content: 'Can you help me?' }],
      skills: [{ skill_name: 'polite-replies', skill_version: 'latest' }],
    } as OpenAI.ChatCompletionCreateParamsNonStreaming & Extra);
    expect(data.choices[0]?.message.content).toBe('Happy to help. Cheers');
    const prompt = JSON.stringify(upstream.requests[seen]?.body.messages);
    expect(prompt).toContain('Skill \\"polite-replies\\"');
    expect(prompt).toContain('ends with the word Cheers');
  });

  it('LangChain ChatOpenAI talks to the agent by base URL only (invoke and stream)', async () => {
    const model = new ChatOpenAI({
      model: 'prism-orion-1',
      apiKey: key,
      configuration: { baseURL: `${app.url}/v1/openai` },
      maxRetries: 0,
    });
    upstream.next({ kind: 'reply', content: 'Bonjour', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const reply = await model.invoke('Say hello in French');
    expect(reply.content).toBe('Bonjour');
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 3, total_tokens: 15 });

    upstream.next({ kind: 'reply', content: 'One,\ntwo,\nthree', usage: { prompt_tokens: 5, completion_tokens: 3 } });
    const pieces: string[] = [];
    for await (const chunk of await model.stream('Count to three')) pieces.push(chunk.text);
    expect(pieces.join('')).toBe('One,\ntwo,\nthree');
  });
});
