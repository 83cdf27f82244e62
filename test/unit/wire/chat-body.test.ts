/**
 * The hot-path chat body check never accepts what the zod schema refuses, and accepts the bodies clients send.
 */
import { chatBodySchema, isWellFormedChatBody, parseChatBody } from '../../../src/wire/chat.schemas';
import { RequestValidationError } from '../../../src/domain/errors';

const messages = [{ role: 'user', content: 'hi' }];

/** Each field's edge values, good and bad, to combine with a valid body. */
const FIELD_VALUES: Record<string, unknown[]> = {
  model: [undefined, null, '', 'm', 7, ['m']],
  messages: [undefined, null, [], messages, [{ role: '' }], [{ content: 'x' }], [null], [[]], ['user'], 'hi'],
  stream: [undefined, null, true, false, 'true', 0],
  max_tokens: [undefined, null, 0, 1, 1.5, -3, 2 ** 53, '10', 65535],
  temperature: [undefined, null, -0.1, 0, 1, 2, 2.01, '1', Number.NaN],
  reasoning_effort: [undefined, null, 'none', 'minimal', 'low', 'high', 1],
  video_fps: [undefined, null, 0, -1, 0.5, 30, Number.POSITIVE_INFINITY, '1'],
  video_max_frames: [undefined, null, 0, 1, 1.5, 4096],
  document_dpi: [undefined, null, 35, 36, 150, 600, 601, 72.5],
};

describe('chat body check', () => {
  it.each(Object.entries(FIELD_VALUES))('agrees with the schema wherever it accepts a %s', (field, values) => {
    for (const value of values) {
      const body: Record<string, unknown> = { model: 'm', messages, [field]: value };
      if (value === undefined) delete body[field];
      const zodAccepts = chatBodySchema.safeParse(body).success;
      if (isWellFormedChatBody(body)) expect([field, value, zodAccepts]).toEqual([field, value, true]);
      // And everything the schema accepts is taken without zod.
      if (zodAccepts) expect([field, value, isWellFormedChatBody(body)]).toEqual([field, value, true]);
    }
  });

  it('refuses what is not an object, and keeps extra keys', () => {
    for (const body of [null, [], 'x', 3, [{ messages }]]) expect(isWellFormedChatBody(body)).toBe(false);
    const extra = { messages, tools: [{ type: 'function' }], user: 'u' };
    expect(isWellFormedChatBody(extra)).toBe(true);
    expect(parseChatBody(extra)).toBe(extra);
  });

  it('leaves bad bodies to zod, which names every issue', () => {
    expect(() => parseChatBody({ messages: [], temperature: 3 })).toThrow(RequestValidationError);
    try {
      parseChatBody({ messages: [], temperature: 3 });
    } catch (error) {
      expect((error as RequestValidationError).issues.map((i) => i.loc)).toEqual([
        ['body', 'messages'],
        ['body', 'temperature'],
      ]);
    }
  });
});
