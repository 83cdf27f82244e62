/**
 * The playground's chat choices (issue 47): the model it starts on chats on text, and a refused call reads as its
 * message. The page embeds these functions' source, so the last case runs them as the browser does: from the page.
 */
import vm from 'node:vm';
import { chatErrorText, defaultChatModel, type PlaygroundModel } from '../../../src/playground/playground-chat';
import { PLAYGROUND_HTML } from '../../../src/playground/playground-page';

const model = (id: string, extra: Partial<PlaygroundModel> = {}): PlaygroundModel => ({
  id,
  owned_by: 'prism',
  methods: [],
  capabilities: { supported_input_types: ['text'], dimensions: [] },
  ...extra,
});
const OCR = model('prism-1', {
  methods: ['ocr', 'extract'],
  capabilities: { supported_input_types: ['image'], dimensions: [] },
});
const EMBED = model('prism-embed-text-1', { capabilities: { supported_input_types: ['text'], dimensions: [384] } });

describe('playground chat', () => {
  it('starts on a text chat model, an upstream one first, never the OCR model or an embedder', () => {
    expect(defaultChatModel([OCR, EMBED, model('prism-orion-1'), model('my-llm', { owned_by: 'vLLM' })])).toBe(
      'my-llm',
    );
    expect(defaultChatModel([OCR, EMBED, model('prism-orion-1')])).toBe('prism-orion-1');
    expect(defaultChatModel([OCR, EMBED])).toBe('prism-1');
    expect(defaultChatModel([])).toBe('');
  });

  it('shows the message of each error shape, and raw text only when there is none', () => {
    const nested = JSON.stringify({ detail: { error: { message: "'prism-1' needs an image", type: 'x' } } });
    expect(chatErrorText(400, nested)).toBe("400: 'prism-1' needs an image");
    expect(chatErrorText(400, JSON.stringify({ detail: {}, error: { message: 'top' } }))).toBe('400: top');
    expect(chatErrorText(401, JSON.stringify({ detail: 'Invalid API Key' }))).toBe('401: Invalid API Key');
    expect(chatErrorText(422, JSON.stringify({ detail: [{ msg: 'Field required' }, { msg: 'bad' }] }))).toBe(
      '422: Field required; bad',
    );
    expect(chatErrorText(502, 'Bad gateway')).toBe('502: Bad gateway');
  });

  it('the page carries the same functions and starts on the chosen model with a prompt that is not "Say hello"', () => {
    const script = /<script>([\s\S]*?)const \$ =/.exec(PLAYGROUND_HTML)?.[1] ?? '';
    // Run in a fresh context, as the browser runs the page's script.
    const page = vm.runInNewContext(`${script}; ({ defaultChatModel, chatErrorText })`) as {
      defaultChatModel: typeof defaultChatModel;
      chatErrorText: typeof chatErrorText;
    };
    expect(page.defaultChatModel([OCR, model('my-llm', { owned_by: 'vLLM' })])).toBe('my-llm');
    expect(page.chatErrorText(400, JSON.stringify({ detail: { error: { message: 'm' } } }))).toBe('400: m');
    expect(PLAYGROUND_HTML).toContain("$('model').value = defaultChatModel(models.data);");
    expect(PLAYGROUND_HTML).not.toContain('value="Say hello"');
  });
});
