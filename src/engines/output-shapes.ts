/**
 * Shapes the local engines' results into the responses clients expect: `<field>_metadata` siblings for
 * confidence and grounding, per-page markdown for `document.markdown`, time-stamped segments for the
 * transcription domains, and the SchemaResponse of `/v1/image/schema`.
 */
import type { Box, DocumentLayout, ExtractionResult, JsonSchema, LayoutPage } from './types';

type Json = Record<string, unknown>;

const level = (c: number): 'hi' | 'med' | 'low' => (c >= 0.8 ? 'hi' : c >= 0.5 ? 'med' : 'low');

function normalisedBox(box: Box, page: LayoutPage | undefined): [number, number, number, number] {
  const w = page?.width || 1;
  const h = page?.height || 1;
  const round = (v: number): number => Math.round(Math.min(1, Math.max(0, v)) * 10000) / 10000;
  return [round(box.x0 / w), round(box.y0 / h), round((box.x1 - box.x0) / w), round((box.y1 - box.y0) / h)];
}

/**
 * Adds `X_metadata: {confidence, bboxes}` beside every extracted leaf `X` when confidence or grounding was asked
 * for (the hosted service's format: `confidence` is hi/med/low, boxes are normalised `xywh` with a 0-based page).
 */
export function withFieldMetadata(
  result: ExtractionResult,
  layout: DocumentLayout,
  options: { confidence: boolean; grounding: boolean },
): Json {
  const data = structuredClone(result.data);
  if (!options.confidence && !options.grounding) return data;
  const paths = new Set([...Object.keys(result.confidence), ...Object.keys(result.grounding)]);
  for (const path of paths) {
    const parts = path.split('.');
    const leaf = parts.pop();
    if (leaf === undefined) continue;
    let parent: unknown = data;
    for (const part of parts) parent = (parent as Record<string, unknown> | undefined)?.[part];
    if (!parent || typeof parent !== 'object' || Array.isArray(parent)) continue;
    const target = parent as Json;
    if (target[leaf] === null || target[leaf] === undefined) continue;
    const metadata: Json = {};
    const confidence = result.confidence[path];
    if (options.confidence && confidence !== undefined) metadata.confidence = level(confidence);
    const ground = result.grounding[path];
    if (options.grounding && ground) {
      const page = layout.pages.find((p) => p.index === ground.page);
      metadata.bboxes = [
        { bbox: { xywh: normalisedBox(ground.box, page) }, content: contentOf(target[leaf]), page: ground.page },
      ];
    }
    target[`${leaf}_metadata`] = metadata;
  }
  return data;
}

const contentOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** `document.markdown`: one markdown page per layout page (lines as paragraphs; no table recognition). */
export function markdownPages(layout: DocumentLayout): Json {
  return {
    pages: layout.pages.map((page) => ({
      page_index: page.index,
      content: page.status === 'ok' ? page.lines.map((l) => l.text).join('\n\n') : '',
      markdown_content: page.status === 'ok' ? page.lines.map((l) => l.text).join('\n\n') : null,
      tables: [],
      figures: [],
      ...(page.status === 'error' ? { error: page.error ?? 'page failed' } : {}),
    })),
  };
}

export interface SpeechSegment {
  startS: number;
  endS: number;
  /** What was said, when a transcription model heard it; absent for voice activity alone. */
  text?: string;
}

/**
 * `audio.transcription`: timed segments of speech, with what was said when a transcription model transcribed them;
 * voice activity alone locates speech but cannot read it, so its segments' content is null.
 */
export function audioTranscription(durationS: number, segments: SpeechSegment[]): Json {
  return {
    metadata: { duration: round2(durationS) },
    segments: segments.map((s) => ({
      start_time: round2(s.startS),
      end_time: round2(s.endS),
      content: s.text ?? null,
    })),
  };
}

/**
 * `video.transcription`: scenes with the on-screen text read from their frames and, when a transcription model read
 * the speech track, what was said in each (a segment belongs to the scene holding its middle); voice activity alone
 * only says whether there was speech.
 */
export function videoTranscription(
  durationS: number,
  sceneStarts: number[],
  layout: DocumentLayout,
  speech: SpeechSegment[] | null,
): Json {
  const starts = [0, ...sceneStarts.filter((t) => t > 0.5 && t < durationS - 0.5)];
  const scenes = starts.map((start, i) => ({ start, end: starts[i + 1] ?? durationS }));
  return {
    metadata: { duration: round2(durationS), description: null, topics: [] },
    segments: scenes.map((scene) => {
      const text = layout.pages
        .filter((p) => (p.timeS ?? 0) >= scene.start && (p.timeS ?? 0) < scene.end && p.status === 'ok')
        .flatMap((p) => p.lines.map((l) => l.text));
      const spoken = speech?.some((s) => s.startS < scene.end && s.endS > scene.start) ?? null;
      const said = (speech ?? [])
        .filter((s) => s.text && (s.startS + s.endS) / 2 >= scene.start && (s.startS + s.endS) / 2 < scene.end)
        .map((s) => s.text);
      return {
        start_time: round2(scene.start),
        end_time: round2(scene.end),
        audio: { content: said.length > 0 ? said.join(' ') : null, speech_detected: spoken },
        video: { content: [...new Set(text)].join('\n') || null },
      };
    }),
  };
}

/** The SchemaResponse `/v1/image/schema` puts in `response`. */
export function schemaResponse(jsonSchema: JsonSchema, hash: string, version: string): Json {
  return {
    domain: null,
    description:
      typeof jsonSchema.description === 'string' ? jsonSchema.description : 'Schema proposed from the document content',
    schema_version: version,
    schema_hash: hash,
    gql_stmt: '',
    json_schema: jsonSchema,
  };
}

const round2 = (v: number): number => Math.round(v * 100) / 100;
