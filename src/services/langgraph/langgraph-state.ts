/**
 * The graph state a LangGraph client sees for a Prism thread: `{messages}` in LangChain's message dicts. Inputs in
 * OpenAI or LangChain shape (role or type, string or content parts, images and files) are normalised here, and a
 * conversation is turned into what a Prism execution takes: a transcript prompt and its media as named inputs.
 */
import { randomUUID } from 'node:crypto';
import { BadRequestError } from '../../domain/errors';

export interface LgMessage {
  type: 'human' | 'ai' | 'system' | 'tool';
  content: string | Record<string, unknown>[];
  id: string;
  [extra: string]: unknown;
}

export interface LgState {
  messages: LgMessage[];
  [key: string]: unknown;
}

const TYPE_OF: Record<string, LgMessage['type']> = {
  human: 'human',
  user: 'human',
  ai: 'ai',
  assistant: 'ai',
  system: 'system',
  developer: 'system',
  tool: 'tool',
};

const MAX_MESSAGES = 500;

/** One input message to a LangChain message dict; a message without an id gets one. */
export function toLgMessage(raw: unknown, index: number): LgMessage {
  if (typeof raw === 'string') return { type: 'human', content: raw, id: randomUUID() };
  if (!raw || typeof raw !== 'object') throw badMessage(index, 'must be an object or a string');
  const m = raw as Record<string, unknown>;
  const kind = typeof m.type === 'string' ? m.type : typeof m.role === 'string' ? m.role : '';
  const type = TYPE_OF[kind];
  if (!type) throw badMessage(index, `has an unknown type '${kind.slice(0, 40)}'`);
  const content = m.content;
  if (typeof content !== 'string' && !Array.isArray(content)) throw badMessage(index, 'content must be text or parts');
  const parts = Array.isArray(content)
    ? content.map((p) => (typeof p === 'string' ? { type: 'text', text: p } : (p as Record<string, unknown>)))
    : content;
  return { ...m, type, content: parts, id: typeof m.id === 'string' && m.id ? m.id : randomUUID() };
}

function badMessage(index: number, what: string): BadRequestError {
  return new BadRequestError(`input.messages[${index}] ${what}.`, null, 'input.messages');
}

/**
 * The state after `input` is applied to `state`: messages are appended (a message with an id already there replaces
 * it, LangGraph's add_messages reducer); other keys are overwritten.
 */
export function applyInput(state: LgState, input: Record<string, unknown> | null | undefined): LgState {
  if (!input) return state;
  const next: LgState = { ...state, ...input, messages: [...state.messages] };
  const raw = input.messages;
  if (raw !== undefined) {
    const list = Array.isArray(raw) ? raw : [raw];
    list.forEach((m, i) => {
      const message = toLgMessage(m, i);
      const at = next.messages.findIndex((x) => x.id === message.id);
      if (at >= 0) next.messages[at] = message;
      else next.messages.push(message);
    });
  }
  if (next.messages.length > MAX_MESSAGES) {
    throw new BadRequestError(`A thread holds at most ${MAX_MESSAGES} messages.`, null, 'input.messages');
  }
  return next;
}

/** The text of a message's content. */
export function textOf(content: LgMessage['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((p) => (typeof p.text === 'string' ? p.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** An image or file part's source (data URL, http(s) URL or Prism file id), with its family, else null. */
function mediaOf(part: Record<string, unknown>): { source: string; type: string } | null {
  const t = part.type;
  if (t === 'image_url') {
    const v = part.image_url;
    const url = typeof v === 'string' ? v : (v as { url?: unknown } | undefined)?.url;
    return typeof url === 'string' ? { source: url, type: 'image_url' } : null;
  }
  if (t === 'image' || t === 'file') {
    const mime = typeof part.mime_type === 'string' ? part.mime_type : 'application/octet-stream';
    const file = part.file as { file_data?: unknown; file_id?: unknown } | undefined;
    const source =
      typeof part.url === 'string'
        ? part.url
        : typeof part.data === 'string'
          ? `data:${mime};base64,${part.data}`
          : typeof file?.file_data === 'string'
            ? file.file_data
            : typeof file?.file_id === 'string'
              ? file.file_id
              : null;
    if (!source) return null;
    return { source, type: t === 'image' || mime.startsWith('image/') ? 'image_url' : 'document_url' };
  }
  return null;
}

/** What one execution is given for a conversation: a transcript prompt and the media of its messages. */
export function executionInputsOf(
  agentPrompt: string | null,
  messages: LgMessage[],
): { prompt: string; inputs: Record<string, unknown> } {
  const inputs: Record<string, unknown> = {};
  const lines = messages.map((m) => {
    const text = textOf(m.content);
    if (Array.isArray(m.content)) {
      for (const part of m.content) {
        const media = mediaOf(part);
        if (!media) continue;
        const name = `attachment_${Object.keys(inputs).length + 1}`;
        inputs[name] =
          media.type === 'image_url'
            ? { type: 'image_url', image_url: { url: media.source } }
            : { type: 'document_url', document_url: { url: media.source } };
      }
    }
    return `${m.type === 'human' ? 'user' : m.type === 'ai' ? 'assistant' : m.type}: ${text}`;
  });
  const last = [...messages].reverse().find((m) => m.type === 'human');
  const task = last ? textOf(last.content) : '';
  const conversation = messages.length > 1 ? `\n\nThe conversation so far:\n${lines.join('\n')}` : '';
  const prompt = [agentPrompt, task].filter((p) => p && p.trim() !== '').join('\n\n') + conversation;
  if (prompt.trim() === '') {
    throw new BadRequestError('A run needs a human message in input.messages.', null, 'input.messages');
  }
  return { prompt, inputs };
}

/** The assistant's reply as a message: the execution's text answer, or its JSON response. */
export function replyOf(response: Record<string, unknown> | null, runId: string): LgMessage {
  const text =
    response && typeof response.text === 'string' && Object.keys(response).length === 1
      ? response.text
      : JSON.stringify(response ?? {});
  return { type: 'ai', content: text, id: `run-${runId}`, tool_calls: [], invalid_tool_calls: [] };
}
