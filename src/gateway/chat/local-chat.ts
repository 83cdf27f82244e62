/**
 * Chat on the embedded engines, with no LLM: `prism-1` answers the verbatim methods (`ocr`, `markdown`, `text`)
 * and `extract` over the one input it takes, as the spec's flat typed method reply (chat rule 8); the orion models,
 * without an upstream LLM configured, read the inputs and say plainly what they can and cannot do.
 */
import { BadRequestError } from '../../domain/errors';
import type { PredictionRequest } from '../../domain/prediction';
import type { DocumentLayout, JsonSchema } from '../../engines/types';
import type { ExtractionEngine, ExtractionInput, ReadResult } from '../../engines/extraction-engine';
import type { MethodParams } from './method-params';

export interface LocalChatInput {
  modelId: string;
  method: string | null;
  /** What the method reads from `method_params` (see method-params.ts). */
  methodParams: MethodParams;
  input: ExtractionInput | null;
  text: string;
  schema: JsonSchema | null;
  jsonObject: boolean;
  request: PredictionRequest;
}

export interface LocalChatAnswer {
  content: string;
  /** Pages or images read (for the usage note). */
  elements: number;
}

const pageText = (layout: DocumentLayout, index: number): string =>
  (layout.pages[index]?.lines ?? []).map((l) => l.text).join('\n');

function inputDetails(input: ExtractionInput, read: ReadResult): Record<string, unknown> {
  const first = read.layout.pages[0];
  if (input.family === 'image') {
    return { image_width: first?.width ?? null, image_height: first?.height ?? null, image_format: input.mimeType };
  }
  if (input.family === 'video') return { video_frames: read.layout.pages.length, video_format: input.mimeType };
  return { file_name: input.filename, file_pages: read.layout.pages.length, file_type: input.mimeType };
}

const UNIT: Record<string, string> = { image: 'image', document: 'page', video: 'frame', audio: 'audio' };

/** The flat typed method reply: `{model, method, type, <input details>, content | pages}`. */
function methodReply(
  modelId: string,
  method: string,
  input: ExtractionInput,
  read: ReadResult,
  content: unknown,
): Record<string, unknown> {
  const domain = input.family === 'image' ? 'image' : input.family === 'video' ? 'video' : 'document';
  const reply: Record<string, unknown> = {
    model: modelId,
    method,
    type: `${domain}.${method}.${UNIT[input.family] ?? 'page'}`,
    ...inputDetails(input, read),
  };
  if (input.family === 'document' && method !== 'extract') {
    reply.pages = read.layout.pages.map((p, i) => ({
      page_index: p.index,
      status: p.status,
      ...(p.status === 'ok' ? { content: pageText(read.layout, i) } : { error: p.error ?? 'page failed' }),
    }));
  } else {
    reply.content = content;
  }
  return reply;
}

function asMarkdown(layout: DocumentLayout): string {
  return layout.pages
    .filter((p) => p.status === 'ok')
    .map((p) => p.lines.map((l) => l.text).join('\n\n'))
    .join('\n\n---\n\n');
}

/** The method a local chat runs: the one asked for, else `extract` with a schema, else `markdown` on prism-1. */
export function effectiveMethod(modelId: string, method: string | null, hasSchema: boolean): string | null {
  return method ?? (hasSchema ? 'extract' : modelId === 'prism-1' ? 'markdown' : null);
}

export async function answerLocally(engine: ExtractionEngine, chat: LocalChatInput): Promise<LocalChatAnswer> {
  const { input } = chat;
  if (!input) {
    if (chat.modelId === 'prism-1') {
      throw new BadRequestError(
        'prism-1 reads one image, video or PDF; send it as an image_url, document_url, video_url or input_file part.',
        'missing_input',
        'messages.content',
      );
    }
    return {
      content:
        'No upstream language model is configured for this model, so I cannot converse. Locally I can read images ' +
        'and documents you attach (OCR, markdown, fields for a JSON schema). Configure an upstream model in ' +
        'PRISM_MODELS_FILE for open-ended chat.',
      elements: 0,
    };
  }
  const read = await engine.read(input, chat.request);
  const method = effectiveMethod(chat.modelId, chat.method, chat.schema !== null);
  if (method === 'extract' || chat.schema) {
    const schema = chat.schema ?? { type: 'object', additionalProperties: true };
    const { confidence, grounding } = chat.methodParams;
    const data = engine.fill(read.layout, schema, { confidence, grounding });
    const content = chat.method ? methodReply(chat.modelId, 'extract', input, read, data) : data;
    return { content: JSON.stringify(content), elements: read.elementsProcessed };
  }
  const text =
    method === 'text' || method === 'ocr'
      ? read.layout.pages.map((_, i) => pageText(read.layout, i)).join('\n\n')
      : asMarkdown(read.layout);
  if (chat.method) {
    return {
      content: JSON.stringify(methodReply(chat.modelId, chat.method, input, read, text)),
      elements: read.elementsProcessed,
    };
  }
  if (chat.jsonObject) return { content: JSON.stringify({ text }), elements: read.elementsProcessed };
  if (chat.modelId === 'prism-1') return { content: text, elements: read.elementsProcessed };
  const note = read.message ? `\n\n(${read.message})` : '';
  return {
    content: `No upstream language model is configured, so here is what I read from the input:\n\n${text}${note}`,
    elements: read.elementsProcessed,
  };
}
