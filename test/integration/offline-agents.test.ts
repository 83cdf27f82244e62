/**
 * Issue 32, item 5: without a language model, agents say what they cannot do instead of pretending. With no
 * upstream configured, the deterministic planner plans `prism-orion-1`/`-2`: a question it cannot answer ends an
 * execution `failed` with a message saying what it can do offline and what to configure (never `completed` with the
 * OCR text), and in agent chat every such turn is answered with that message, not the reading of the attachments.
 * What it can do offline keeps working: reading media when asked to, and filling a schema (the request's, or the
 * response_format's in chat). docs/offline-agents.md states the same.
 */
import OpenAI from 'openai';
import { renderReceiptImage } from '../helpers/media-fixtures';
import { call, startTestApp, uploadFile, type TestApp } from '../helpers/test-app';

interface ExecutionWire {
  status: string;
  response: Record<string, unknown> | null;
  usage: { message: string | null };
}

const TOTAL_SCHEMA = { type: 'object', properties: { total: { type: ['number', 'null'] } }, required: ['total'] };

/** Words of the receipt's OCR text that an honest refusal never repeats. */
const RECEIPT_WORDS = /Bananas|Sourdough|SUBTOTAL/;

describe('agents without a language model say what they cannot do', () => {
  let app: TestApp;
  let key: string;
  let receiptId: string;
  let openai: OpenAI;

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.createKey('offline', 'pro');
    await app.container.services.accounts.addCredits('offline', 5);
    const uploaded = await uploadFile(app.url, key, renderReceiptImage(), { filename: 'receipt.png' });
    receiptId = ((await uploaded.json()) as { id: string }).id;
    openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/v1/compat`, maxRetries: 0 });
  });
  afterAll(() => app.close());

  const execute = async (config: Record<string, unknown>, model = 'prism-orion-1'): Promise<ExecutionWire> => {
    const res = await call(`${app.url}/v1/agent/execute`, {
      key,
      json: { model, inputs: { receipt: { type: 'input_file', file_id: receiptId } }, config },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as ExecutionWire;
  };

  describe('executions', () => {
    it.each(['Which store issued this receipt?', 'What is the total?', 'Thanks!'])(
      '"%s" with no schema fails, saying what it can do offline and what to configure',
      async (prompt) => {
        const run = await execute({ prompt });
        expect(run.status).toBe('failed');
        expect(run.response).toBeNull();
        const message = run.usage.message ?? '';
        expect(message).toContain(`cannot answer "${prompt}"`);
        expect(message).toMatch(/reads inputs .* and fills a JSON schema/);
        expect(message).toContain('config.json_schema');
        expect(message).toContain('PRISM_MODELS_FILE');
        expect(message).not.toMatch(RECEIPT_WORDS);
      },
    );

    it('the same question with a schema naming the value is answered by filling it', async () => {
      const run = await execute({ prompt: 'What is the total?', json_schema: TOTAL_SCHEMA }, 'prism-orion-2');
      expect(run.status).toBe('completed');
      expect(run.response).toEqual({ total: 26.22 });
    });

    it('asked to read, it returns what it read', async () => {
      const run = await execute({ prompt: 'Read this receipt' });
      expect(run.status).toBe('completed');
      const receipt = run.response?.receipt as { type: string; text: string };
      expect(receipt.type).toBe('image');
      expect(receipt.text).toMatch(/GREENLEAF/);
    });

    it('with no instruction at all, it returns what it read', async () => {
      const run = await execute({});
      expect(run.status).toBe('completed');
      expect(JSON.stringify(run.response)).toMatch(/GREENLEAF/);
    });
  });

  describe('agent chat on prism-orion-1', () => {
    const reply = async (messages: unknown[], sessionId?: string, extra: Record<string, unknown> = {}) => {
      const data = await openai.chat.completions.create({
        model: 'prism-orion-1',
        messages: messages as OpenAI.Chat.ChatCompletionMessageParam[],
        ...(sessionId ? { session_id: sessionId } : {}),
        ...extra,
      } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
      return {
        text: data.choices[0]?.message.content ?? '',
        sessionId: (data as unknown as { session_id: string }).session_id,
        message: (data.usage as unknown as { message: string | null }).message,
      };
    };

    it('answers questions and remarks with what it can do offline, turn after turn, never the OCR dump', async () => {
      const first = await reply([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Which store issued this receipt?' },
            { type: 'file', file: { file_id: receiptId } },
          ],
        },
      ]);
      for (const turn of [first, await reply([{ role: 'user', content: 'And the total?' }], first.sessionId)]) {
        expect(turn.text).toMatch(/^No upstream language model is configured for prism-orion-1\./);
        expect(turn.text).toMatch(/only reads inputs .* and fills a JSON schema/);
        expect(turn.text).toContain('response_format');
        expect(turn.text).toContain('PRISM_MODELS_FILE');
        expect(turn.text).not.toMatch(RECEIPT_WORDS);
        expect(turn.message).toMatch(/No language model planned this run/);
      }
      const thanks = await reply([{ role: 'user', content: 'Thanks!' }], first.sessionId);
      expect(thanks.text).toContain('cannot answer "Thanks!"');
      expect(thanks.text).not.toMatch(RECEIPT_WORDS);
    });

    it('reads an attachment when asked to, and fills a response_format schema', async () => {
      const read = await reply([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read this' },
            { type: 'file', file: { file_id: receiptId } },
          ],
        },
      ]);
      expect(read.text).toMatch(/GREENLEAF/);

      const filled = await reply(
        [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is the total?' },
              { type: 'file', file: { file_id: receiptId } },
            ],
          },
        ],
        undefined,
        { response_format: { type: 'json_schema', json_schema: { name: 'total', schema: TOTAL_SCHEMA } } },
      );
      expect(JSON.parse(filled.text)).toEqual({ total: 26.22 });
    });
  });
});
