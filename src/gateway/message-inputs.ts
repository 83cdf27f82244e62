/**
 * Finds the media a chat request carries (image_url, document_url, video_url, audio_url, file_url, input_file,
 * input_audio parts) and the text around it, so the local engines can read the one input a structured model takes.
 */
import type { InputSources } from '../services/inputs/resolve-input';

export interface ChatMessage {
  role: string;
  content?: unknown;
}

export interface MediaPart {
  type: string;
  sources: InputSources;
  /** `messages.content.<type>` for capability errors' params. */
  param: string;
  /** Where the part sits, e.g. `messages.0.content.1.image_url`: the param of errors about its URL or bytes. */
  path: string;
}

type Part = Record<string, unknown>;

const urlOf = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as Part).url === 'string') {
    return (value as Part).url as string;
  }
  return undefined;
};

function mediaOf(part: Part): InputSources | null {
  switch (part.type) {
    case 'image_url':
    case 'input_image':
    case 'video_url':
    case 'audio_url':
    case 'document_url':
    case 'file_url': {
      const url = urlOf(part[part.type === 'input_image' ? 'image_url' : (part.type as string)]) ?? urlOf(part.url);
      return url ? { images: [url] } : null;
    }
    case 'input_file':
    case 'file': {
      const file = (part.file as Part | undefined) ?? part;
      if (typeof file.file_id === 'string') return { fileId: file.file_id };
      const url = urlOf(file.file_url) ?? (typeof file.file_data === 'string' ? file.file_data : undefined);
      return url ? { images: [url] } : null;
    }
    case 'input_audio': {
      const audio = part.input_audio as Part | undefined;
      return typeof audio?.data === 'string' ? { images: [audio.data] } : null;
    }
    default:
      return null;
  }
}

/** Media parts in message order. */
export function mediaParts(messages: readonly ChatMessage[]): MediaPart[] {
  const found: MediaPart[] = [];
  messages.forEach((message, m) => {
    if (!Array.isArray(message.content)) return;
    (message.content as unknown[]).forEach((raw, p) => {
      if (!raw || typeof raw !== 'object') return;
      const part = raw as Part;
      const sources = mediaOf(part);
      if (!sources) return;
      const type = String(part.type);
      found.push({ type, sources, param: `messages.content.${type}`, path: `messages.${m}.content.${p}.${type}` });
    });
  });
  return found;
}

/** All text the caller wrote (for token counts and the local planner), in order. */
export function textOf(messages: readonly ChatMessage[]): string {
  const pieces: string[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') pieces.push(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content as unknown[]) {
        if (part && typeof part === 'object' && typeof (part as Part).text === 'string') {
          pieces.push((part as Part).text as string);
        }
      }
    }
  }
  return pieces.join('\n');
}

/** Tokens for a number of characters: about four characters per token, as OpenAI documents for English. */
export const tokensForChars = (chars: number): number => Math.ceil(chars / 4);

/** A rough token count of a text (see {@link tokensForChars}). */
export const countTokens = (text: string): number => tokensForChars(text.length);
