/**
 * Judging a strict `json_schema` reply (src/gateway/chat/strict-reply.ts) on the shapes the integration suite does
 * not script: which bodies ask for a check, choices that answer with tool calls or a refusal, several choices,
 * content that is not a string, and the retry body the problems are written into.
 */
import { judgeReply, retryBody, strictResponseSchema } from '../../../src/gateway/chat/strict-reply';

const SCHEMA = {
  type: 'object',
  properties: { total: { type: 'number' } },
  required: ['total'],
  additionalProperties: false,
};
const reply = (...messages: Record<string, unknown>[]) => ({
  choices: messages.map((message, index) => ({ index, message: { role: 'assistant', ...message } })),
});

describe('strict json_schema replies', () => {
  it('asks for a check only for OpenAI-shaped json_schema with strict: true and an object schema', () => {
    const format = (json_schema: unknown, type = 'json_schema') => ({ response_format: { type, json_schema } });
    expect(strictResponseSchema(format({ name: 'x', strict: true, schema: SCHEMA }))).toEqual(SCHEMA);
    expect(strictResponseSchema(format({ name: 'x', strict: false, schema: SCHEMA }))).toBeNull();
    expect(strictResponseSchema(format({ name: 'x', strict: 'true', schema: SCHEMA }))).toBeNull();
    expect(strictResponseSchema(format({ name: 'x', schema: SCHEMA }))).toBeNull();
    expect(strictResponseSchema(format({ name: 'x', strict: true }))).toBeNull();
    expect(strictResponseSchema(format({ strict: true, schema: SCHEMA }, 'json_object'))).toBeNull();
    expect(strictResponseSchema({ response_format: { type: 'json_schema', schema: SCHEMA, strict: true } })).toBeNull();
    expect(strictResponseSchema({})).toBeNull();
  });

  it('passes valid JSON and names what is wrong with the rest', () => {
    expect(judgeReply(SCHEMA, reply({ content: '{"total": 3}' }))).toEqual({
      valid: true,
      errors: [],
      failedContent: null,
    });
    const wrong = judgeReply(SCHEMA, reply({ content: '{"total": "3", "extra": 1}' }));
    expect(wrong.valid).toBe(false);
    expect(wrong.errors).toEqual(
      expect.arrayContaining(['/total must be number', '/ must NOT have additional properties']),
    );
    expect(wrong.failedContent).toBe('{"total": "3", "extra": 1}');
    expect(judgeReply(SCHEMA, reply({ content: 'total: 3' })).errors[0]).toMatch(/^the reply is not JSON/);
    expect(judgeReply(SCHEMA, reply({ content: null })).errors).toEqual(['the reply has no text content']);
    expect(judgeReply(SCHEMA, { choices: [] }).valid).toBe(false);
  });

  it('does not judge a choice that answers with tool calls or a refusal instead of content', () => {
    const toolCall = { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    expect(judgeReply(SCHEMA, reply({ content: null, tool_calls: [toolCall] })).valid).toBe(true);
    expect(judgeReply(SCHEMA, reply({ content: null, refusal: 'I cannot help with that.' })).valid).toBe(true);
    // content beside tool calls is still an answer, and is judged
    expect(judgeReply(SCHEMA, reply({ content: 'nope', tool_calls: [toolCall] })).valid).toBe(false);
  });

  it('judges every choice and names the one that failed', () => {
    const verdict = judgeReply(SCHEMA, reply({ content: '{"total": 1}' }, { content: '{}' }));
    expect(verdict.valid).toBe(false);
    expect(verdict.errors).toEqual(["choice 1: / must have required property 'total'"]);
    expect(verdict.failedContent).toBe('{}');
  });

  it('writes the retry as the failed reply plus a user message listing the problems', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };
    const verdict = judgeReply(SCHEMA, reply({ content: '{"total": "x"}' }));
    const retry = retryBody(body, verdict);
    expect(retry).toMatchObject({ model: 'm', temperature: 0 });
    expect(retry.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '{"total": "x"}' },
      { role: 'user', content: expect.stringContaining('- /total must be number') as unknown },
    ]);
    expect(body.messages).toHaveLength(1); // the first call's body is not changed
  });
});
