/**
 * Paused runs on the other two faces (docs/agent-runs.md): over MCP (the SDK Client) `execute_agent` comes back `paused` with
 * what it waits for and how to resume, and `resume_execution` continues it; in agent chat (the `openai` SDK) a turn
 * asks the person in the thread before a tool that needs approval, and the next turn's answer resumes the run.
 */
import OpenAI from 'openai';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { connectMcp, toolOutput } from '../helpers/mcp-client';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import { uploadFile, type TestApp } from '../helpers/test-app';
import { CHAT_PLANNER, startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

jest.setTimeout(120_000);

/** Prism's extra chat keys go in the body as they are. */
type Extra = Record<string, unknown>;

describe('paused runs over MCP and in agent chat', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let receiptId: string;

  beforeAll(async () => {
    lab = await startUpstreamApp([CHAT_PLANNER], { env: { PRISM_RATE_LIMIT_PER_MINUTE: '1000' } });
    ({ app, upstream } = lab);
    key = await app.createKey('steer-org', 'pro');
    await app.container.services.accounts.addCredits('steer-org', 5);
    const res = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    receiptId = ((await res.json()) as { id: string }).id;
  });
  afterAll(() => lab.close());

  const ocr = (image: string) => ({
    kind: 'reply' as const,
    toolCalls: [{ id: 'call_ocr', name: 'ocr_image', arguments: JSON.stringify({ image }) }],
    usage: { prompt_tokens: 100, completion_tokens: 10 },
  });

  it('MCP: execute_agent reports the pause and resume_execution continues the run', async () => {
    const client = await connectMcp(app.url, `Bearer ${key}`, { toolsets: 'agents' });
    try {
      upstream.next(ocr(receiptId));
      const result = await client.callTool({
        name: 'execute_agent',
        arguments: { inputs: {}, config: { prompt: 'Which store?', require_approval: ['ocr_image'] } },
      });
      const paused = toolOutput(result as never);
      expect(paused).toMatchObject({
        status: 'paused',
        pause: { kind: 'tool_approval', tool_call: { name: 'ocr_image', arguments: { image: receiptId } } },
      });
      const note = (result.content as { type: string; text?: string }[]).map((b) => b.text ?? '').join('\n');
      expect(note).toContain('resume_execution');
      expect(note).toContain(`"id": "${paused.id as string}"`);

      upstream.next({
        kind: 'reply',
        content: 'GREENLEAF GROCERY LTD.',
        usage: { prompt_tokens: 200, completion_tokens: 5 },
      });
      const resumed = toolOutput(
        (await client.callTool({
          name: 'resume_execution',
          arguments: { id: paused.id, action: 'approve' },
        })) as never,
      );
      expect(resumed).toMatchObject({
        id: paused.id,
        status: 'completed',
        response: { text: 'GREENLEAF GROCERY LTD.' },
      });
      const last = upstream.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
      expect(last.messages.find((m) => m.role === 'tool')?.content).toContain('GREENLEAF');
    } finally {
      await client.close();
    }
  });

  it('chat: the turn asks in the thread and the next turn’s answer resumes the run', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/openai`, maxRetries: 0 });
    upstream.next(ocr('img_wrong1'));
    const ask = await openai.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'Which store issued my receipt?' }],
      require_approval: ['ocr_image'],
    } as Parameters<typeof openai.chat.completions.create>[0] & Extra);
    const asked = ask as OpenAI.ChatCompletion & { session_id: string };
    const question = asked.choices[0]?.message.content ?? '';
    expect(question).toContain('approval to call ocr_image');
    expect(question).toContain('img_wrong1');

    // The person answers with the arguments to use instead: the run continues from its checkpoint.
    const seen = upstream.requests.length;
    upstream.next({
      kind: 'reply',
      content: 'It was GREENLEAF GROCERY LTD.',
      usage: { prompt_tokens: 300, completion_tokens: 8 },
    });
    const answer = await openai.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: JSON.stringify({ image: receiptId }) }],
      session_id: asked.session_id,
    } as Parameters<typeof openai.chat.completions.create>[0] & Extra);
    expect((answer as OpenAI.ChatCompletion).choices[0]?.message.content).toBe('It was GREENLEAF GROCERY LTD.');
    // Each turn is billed for its own planner rounds: the asking turn's round is not counted again.
    expect(asked.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 10 });
    expect((answer as OpenAI.ChatCompletion).usage).toMatchObject({ prompt_tokens: 300, completion_tokens: 8 });
    // One planner call: the run went on where it stopped (the tool ran with the person's arguments), not over.
    expect(upstream.requests.length - seen).toBe(1);
    const resumedCall = upstream.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
    expect(resumedCall.messages.find((m) => m.role === 'tool')?.content).toContain('GREENLEAF');
    expect(resumedCall.messages[1]?.content).toContain('Which store issued my receipt?');

    // The thread keeps both turns: the question asked and the answer.
    const history = (await (
      await fetch(`${app.url}/v1/chat/messages?session_id=${asked.session_id}`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as { messages: { role: string; content: string }[] };
    expect(history.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(history.messages[1]?.content).toBe(question);

    // A "no" refuses the call: the planner reads the reason and answers without the tool.
    upstream.next(ocr(receiptId));
    const again = (await openai.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'Read it once more.' }],
      session_id: asked.session_id,
      require_approval: ['ocr_image'],
    } as Parameters<typeof openai.chat.completions.create>[0] & Extra)) as OpenAI.ChatCompletion;
    expect(again.choices[0]?.message.content).toContain('approval to call ocr_image');
    upstream.next({
      kind: 'reply',
      content: 'Alright, I will not read it.',
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    });
    const refused = (await openai.chat.completions.create({
      model: 'prism-orion-1',
      messages: [{ role: 'user', content: 'no, not again' }],
      session_id: asked.session_id,
    } as Parameters<typeof openai.chat.completions.create>[0] & Extra)) as OpenAI.ChatCompletion;
    expect(refused.choices[0]?.message.content).toBe('Alright, I will not read it.');
    const told = upstream.requests.at(-1)?.body as { messages: { role: string; content: string }[] };
    expect(told.messages.filter((m) => m.role === 'tool').at(-1)?.content).toContain('no, not again');
  });
});
