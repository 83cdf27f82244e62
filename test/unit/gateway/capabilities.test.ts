import type { AppError } from '../../../src/domain/errors';
import { checkChatCapabilities, checkEmbeddingCapabilities, type SentBody } from '../../../src/gateway/capabilities';
import { createModelCatalogue } from '../../../src/gateway/catalogue/model-catalogue';
import { parseModelsFile } from '../../../src/gateway/catalogue/models-file';

const models = createModelCatalogue({
  env: {},
  file: parseModelsFile(`
upstreams: [{ name: ollama, base_url: "http://127.0.0.1:11434/v1" }]
models:
  - id: text-llm
    engine: { kind: upstream, upstream: ollama, model: llama3.2 }
    supported_parameters: [temperature, stream]
`),
});

function violation(check: () => void): { status: number; code: string | null; param: string | null } {
  try {
    check();
  } catch (error) {
    const e = error as AppError;
    return { status: e.status, code: e.code, param: e.param };
  }
  throw new Error('expected a violation');
}

const chat = (model: string, body: SentBody) => () => checkChatCapabilities(models.resolve(model), { model, ...body });
const embed = (model: string, body: SentBody) => () =>
  checkEmbeddingCapabilities(models.resolve(model), { model, ...body });
const user = (...content: unknown[]) => ({ messages: [{ role: 'user', content }] });
const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } };
const pdf = { type: 'document_url', document_url: { url: 'https://example.com/a.pdf' } };

describe('chat capability checks', () => {
  it('accepts what the model supports', () => {
    expect(
      chat('prism-1', { ...user({ type: 'text', text: 'read' }, pdf), method: 'ocr', stream: true }),
    ).not.toThrow();
    expect(chat('prism-orion-1', { ...user(image, image, pdf), tools: [], max_tokens: 10 })).not.toThrow();
    expect(chat('text-llm', { messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 })).not.toThrow();
  });

  it('names a parameter outside supported_parameters', () => {
    expect(violation(chat('text-llm', { messages: [], top_p: 0.9 }))).toEqual({
      status: 400,
      code: 'capability_violation',
      param: 'top_p',
    });
    expect(violation(chat('prism-1', { ...user(pdf), tools: [] })).param).toBe('tools');
  });

  it('checks only what the caller sent: absent and null parameters pass', () => {
    expect(chat('text-llm', { messages: [], top_p: null, tools: undefined })).not.toThrow();
  });

  it('names the content path of a media type the model does not read', () => {
    expect(violation(chat('text-llm', user(pdf)))).toEqual({
      status: 400,
      code: 'capability_violation',
      param: 'messages.content.document_url',
    });
    expect(violation(chat('prism-orion-2', user({ type: 'video_url', video_url: { url: 'x' } }))).param).toBe(
      'messages.content.video_url',
    );
    expect(violation(chat('prism-1', user({ type: 'input_audio', input_audio: {} }))).param).toBe(
      'messages.content.input_audio',
    );
    expect(violation(chat('prism-1', user({ type: 'hologram' }))).param).toBe('messages.content.hologram');
  });

  it('refuses several images to a single-image model, and a second input of another kind', () => {
    expect(violation(chat('prism-1', user(image, image)))).toEqual({
      status: 400,
      code: 'capability_violation',
      param: 'messages.content.image_url',
    });
    expect(violation(chat('prism-1', user(image, pdf)))).toEqual({
      status: 400,
      code: 'too_many_inputs',
      param: 'messages.content.document_url',
    });
  });

  it('allows json_object everywhere but json_schema only where it can be enforced', () => {
    const schema = { type: 'json_schema', json_schema: { name: 'x', schema: {} } };
    expect(chat('text-llm', { messages: [], response_format: { type: 'json_object' } })).not.toThrow();
    expect(chat('prism-1', { ...user(pdf), response_format: schema })).not.toThrow();
    expect(violation(chat('text-llm', { messages: [], response_format: schema })).param).toBe('response_format');
  });

  it('refuses an unknown method, and an embedding model on the chat route', () => {
    expect(violation(chat('prism-1', { ...user(pdf), method: 'segment' })).param).toBe('method');
    expect(violation(chat('prism-embed-text-1', { messages: [] })).param).toBe('model');
  });
});

describe('embedding capability checks', () => {
  it('accepts text, token ids and the parts the model reads', () => {
    expect(
      embed('prism-embed-text-1', { input: ['a', 'b'], dimensions: 256, encoding_format: 'base64' }),
    ).not.toThrow();
    expect(embed('prism-embed-text-1', { input: [[1, 2, 3]] })).not.toThrow();
    expect(embed('prism-embed-mm-1', { input: [[{ type: 'text', text: 'a' }, image], 'b'] })).not.toThrow();
  });

  it('names the input path of a part the model does not read', () => {
    expect(violation(embed('prism-embed-text-1', { input: [image] }))).toEqual({
      status: 400,
      code: 'capability_violation',
      param: 'input.image_url',
    });
  });

  it('refuses unsupported dimensions and parameters, and chat models', () => {
    expect(violation(embed('prism-embed-text-1', { input: 'a', dimensions: 300 })).param).toBe('dimensions');
    expect(violation(embed('prism-embed-mm-1', { input: 'a', dimensions: 768 })).param).toBe('dimensions');
    expect(violation(embed('prism-embed-text-1', { input: 'a', video_fps: 1 })).param).toBe('video_fps');
    expect(violation(embed('prism-1', { input: 'a' })).param).toBe('model');
  });
});
