/**
 * LangChain's `@langchain/openai` (ChatOpenAI, OpenAIEmbeddings) pointed at Prism by base URL only, as an
 * application would: invoke, stream, structured output, tool calling through a scripted upstream, embeddings on
 * the embedded model, and an error whose message is Prism's own.
 */
import { tool } from '@langchain/core/tools';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { z } from 'zod';
import type { ScriptedUpstream } from '../helpers/scripted-upstream';
import type { TestApp } from '../helpers/test-app';
import { startUpstreamApp, type UpstreamApp } from '../helpers/upstream-app';

describe('LangChain @langchain/openai against Prism', () => {
  let lab: UpstreamApp;
  let upstream: ScriptedUpstream;
  let app: TestApp;
  let key: string;
  let baseURL: string;

  const chatModel = (model = 'lab-chat'): ChatOpenAI =>
    new ChatOpenAI({ model, apiKey: key, configuration: { baseURL }, maxRetries: 0 });

  beforeAll(async () => {
    lab = await startUpstreamApp(
      [
        {
          id: 'lab-chat',
          upstreamModel: 'qwen-7b',
          capabilities: { supported_input_types: ['text'], json_schema: true },
          parameters: [
            'max_tokens',
            'temperature',
            'stream',
            'stream_options',
            'response_format',
            'tools',
            'tool_choice',
          ],
          pricing: { prompt: 1.0, completion: 2.0 },
        },
      ],
      { provider: 'vLLM' },
    );
    ({ app, upstream } = lab);
    key = await app.createKey('chains', 'pro');
    await app.container.services.accounts.addCredits('chains', 5);
    baseURL = `${app.url}/v1/compat`;
  });
  afterAll(() => lab.close());

  it('invoke: the reply, its token usage and the model the upstream was asked for', async () => {
    upstream.next({ kind: 'reply', content: 'Bonjour', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const reply = await chatModel().invoke('Say hello in French');
    expect(reply.content).toBe('Bonjour');
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 3, total_tokens: 15 });
    expect(upstream.requests.at(-1)?.body).toMatchObject({
      model: 'qwen-7b',
      messages: [{ role: 'user', content: 'Say hello in French' }],
    });
  });

  it('stream: the pieces arrive in order', async () => {
    upstream.next({
      kind: 'stream',
      chunks: ['One, ', 'two, ', 'three'],
      usage: { prompt_tokens: 5, completion_tokens: 3 },
    });
    const pieces: string[] = [];
    for await (const chunk of await chatModel().stream('Count to three')) pieces.push(chunk.text);
    expect(pieces.join('')).toBe('One, two, three');
    expect(pieces.filter(Boolean).length).toBeGreaterThanOrEqual(3);
  });

  it('withStructuredOutput: the JSON schema goes upstream and the parsed object comes back', async () => {
    upstream.next({ kind: 'reply', content: '{"city":"Paris","population_millions":2.1}' });
    const City = z.object({ city: z.string(), population_millions: z.number() });
    const structured = chatModel().withStructuredOutput(City, { name: 'city' });
    const city = await structured.invoke('The capital of France and its population');
    expect(city).toEqual({ city: 'Paris', population_millions: 2.1 });
    const sent = upstream.requests.at(-1)?.body.response_format as { type: string; json_schema: { schema: unknown } };
    expect(sent.type).toBe('json_schema');
    expect(sent.json_schema.schema).toMatchObject({ properties: { city: { type: 'string' } } });
  });

  it('tool calling: bound tools reach the upstream and its tool calls come back parsed', async () => {
    const weather = tool(({ city }: { city: string }) => `Sunny in ${city}`, {
      name: 'get_weather',
      description: 'The weather in a city',
      schema: z.object({ city: z.string() }),
    });
    upstream.next({
      kind: 'reply',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Lyon"}' }],
      finishReason: 'tool_calls',
    });
    const reply = await chatModel().bindTools([weather]).invoke('What is the weather in Lyon?');
    expect(reply.tool_calls).toEqual([
      expect.objectContaining({ id: 'call_1', name: 'get_weather', args: { city: 'Lyon' } }),
    ]);
    const sent = upstream.requests.at(-1)?.body.tools as { function: { name: string } }[];
    expect(sent.map((t) => t.function.name)).toEqual(['get_weather']);
  });

  it('embeddings: vectors from the embedded model, one per text, unit length', async () => {
    const embeddings = new OpenAIEmbeddings({
      model: 'prism-embed-text-1',
      apiKey: key,
      configuration: { baseURL },
      maxRetries: 0,
    });
    const [invoice, receipt] = await embeddings.embedDocuments(['an invoice for services', 'a shop receipt']);
    const query = await embeddings.embedQuery('invoice');
    for (const vector of [invoice, receipt, query]) {
      expect(vector?.length).toBeGreaterThan(0);
      expect(Math.hypot(...(vector ?? []))).toBeCloseTo(1, 3);
    }
    const dot = (a: number[], b: number[]): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);
    expect(dot(query, invoice ?? [])).toBeGreaterThan(dot(query, receipt ?? []));
  });

  it("errors carry Prism's message, code and status", async () => {
    await expect(chatModel('no-such-model').invoke('hi')).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
      message: expect.stringContaining("The model 'no-such-model' does not exist") as unknown,
    });
    // A parameter the model does not take: the 400 that LangChain users used to see as "400 status code (no body)".
    const withTopP = new ChatOpenAI({
      model: 'lab-chat',
      apiKey: key,
      configuration: { baseURL },
      maxRetries: 0,
      topP: 0.5,
    });
    await expect(withTopP.invoke('hi')).rejects.toMatchObject({
      status: 400,
      code: 'capability_violation',
      param: 'top_p',
      message: expect.stringMatching(/^400 .*top_p/) as unknown,
    });
  });
});
