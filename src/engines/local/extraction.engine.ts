/**
 * `prism-1` on the embedded engines: the ExtractionEngine the predictions service runs when no upstream model is
 * configured. It turns the input into a DocumentLayout (OCR of an image, the text layer or OCR of PDF pages, OCR of
 * sampled video frames), then fills the schema from the layout with the deterministic extractor, or builds the
 * special responses of the markdown and transcription domains. Audio gets duration and speech segments; the words
 * themselves need a speech model. With a transcription model configured (a SpeechReader over it) every audio
 * request is read on it: `audio.transcription` carries its timed text, other audio domains and schemas are filled
 * from the transcript, and `video.transcription` puts what was said in each scene; the seconds it heard are
 * reported for billing (`speechSeconds`). Without one we say so instead of inventing words.
 */
import { invalidDocument } from '../pdf/pdfjs-loader';
import { AllPagesFailedError } from '../../domain/errors';
import type { PredictionKind, PredictionRequest } from '../../domain/prediction';
import { INTERFACE_VERSION } from '../../domain/version';
import { schemaHash } from '../../lib/schema-hash';
import type { Logger } from '../../lib/logger';
import type {
  ExtractionEngine,
  ExtractionInput,
  ExtractionJob,
  ExtractionOutput,
  InputMeasure,
  ReadResult,
} from '../extraction-engine';
import {
  audioTranscription,
  markdownPages,
  schemaResponse,
  videoTranscription,
  withFieldMetadata,
  type SpeechSegment,
} from '../output-shapes';
import type { DocumentLayout, ExtractionResult, JsonSchema, LayoutLine, LayoutPage, LayoutWord } from '../types';
import { billedSeconds, type ReadSpeech, type SpeechReader, type TimedSpeech } from './speech-reader';

export const LOCAL_MODELS = ['prism-1'] as const;
const NO_SPEECH_MODEL =
  'Speech was located but not transcribed: transcription needs an upstream speech model (see PRISM_MODELS_FILE).';

export type { SpeechTranscriber, TimedSpeech } from './speech-reader';

export interface AudioAnalysis {
  durationS: number;
  segments: SpeechSegment[];
  vad: string;
}

export interface VideoAnalysis {
  layout: DocumentLayout;
  durationS: number;
  sceneChanges: number[];
  hasAudio: boolean;
}

/** The embedded engines the local model is made of; each is built in engines/* and injected here. */
export interface LocalEngineSet {
  validateImage(bytes: Buffer): Promise<void>;
  /** @returns how many pages a read would take (the page count, capped by the page limit). */
  imageLayout(bytes: Buffer): Promise<DocumentLayout>;
  validatePdf(bytes: Buffer): Promise<number>;
  pdfLayout(
    bytes: Buffer,
    options: { dpi: number | null; pageIndices: number[] | null; onProgress?: (done: number, total: number) => void },
  ): Promise<DocumentLayout & { pageCount?: number }>;
  /** @returns the duration in seconds, null when the container does not say. */
  validateMedia(bytes: Buffer): Promise<number | null>;
  video(bytes: Buffer, options: { fps: number | null; maxFrames: number | null }): Promise<VideoAnalysis>;
  audio(bytes: Buffer): Promise<AudioAnalysis>;
  /** Whole recordings on the transcription model, when the models file names one; absent: speech is located only. */
  readSpeech?: SpeechReader | null;
  extract(
    layout: DocumentLayout,
    schema: JsonSchema,
    options: { confidence: boolean; grounding: boolean; hints: { domain?: string; prompt?: string } },
  ): ExtractionResult;
  proposeSchema(layout: DocumentLayout): JsonSchema;
  close(): Promise<void>;
}

export function createLocalExtraction(engines: LocalEngineSet, logger: Logger): ExtractionEngine {
  return {
    models: LOCAL_MODELS,
    validateInput: (kind, input, domain) => validateLocalInput(engines, kind, input, domain),
    run: (job) => runLocal(engines, logger, job),
    read: (input, request) => readLocal(engines, input, request),
    fill: (layout, schema, options) =>
      withFieldMetadata(engines.extract(layout, schema, { ...options, hints: {} }), layout, options),
    close: () => engines.close(),
  };
}

/** A layout and what reading it cost, as `run` and `read` report it. */
interface ReadLayout {
  layout: DocumentLayout;
  extra: Partial<ExtractionOutput>;
}

/** Decode check and the most credits reading the input can bill (pages, minutes, or 1). */
async function validateLocalInput(
  engines: LocalEngineSet,
  kind: PredictionKind,
  input: ExtractionInput,
  domain?: string | null,
): Promise<InputMeasure> {
  if (kind === 'audio' || kind === 'video') {
    const durationS = await engines.validateMedia(input.bytes);
    const maxCredits = Math.max(1, Math.ceil((durationS ?? 0) / 60));
    // Audio is read on the transcription model whatever the domain; a video only for its transcription.
    const heard = engines.readSpeech && (kind === 'audio' || domain?.startsWith('video.transcription'));
    return heard ? { maxCredits, speechSeconds: billedSeconds(durationS ?? 0) } : { maxCredits };
  }
  if (kind === 'document' && input.bytes.length === 0) throw invalidDocument('the file is empty');
  if (kind === 'document' && input.family === 'document') {
    return { maxCredits: Math.max(1, await engines.validatePdf(input.bytes)) };
  }
  await engines.validateImage(input.bytes);
  return { maxCredits: 1 };
}

/** Reads a document's pages; a page that failed is not billed, and a document read in part says so. */
async function documentLayout(engines: LocalEngineSet, job: ExtractionJob): Promise<ReadLayout> {
  const { input, request } = job;
  const layout = await engines.pdfLayout(input.bytes, {
    dpi: request.documentDpi,
    pageIndices: request.pageIndices,
    ...(job.onProgress ? { onProgress: job.onProgress } : {}),
  });
  const failed = layout.pages.filter((p) => p.status === 'error');
  if (layout.pages.length > 0 && failed.length === layout.pages.length) {
    const reasons = [...new Set(failed.map((p) => p.error ?? 'unknown error'))].join('; ');
    throw new AllPagesFailedError(`Every page of the document failed: ${reasons}`);
  }
  const notes: string[] = [];
  if (failed.length > 0) {
    notes.push(
      `${failed.length} of ${layout.pages.length} pages failed and were not billed: ` +
        failed.map((p) => `page ${p.index}: ${p.error ?? 'error'}`).join('; '),
    );
  }
  // A document over the page cap is read in part: say so rather than answer as if it were whole.
  const total = layout.pageCount ?? layout.pages.length;
  if (request.pageIndices === null && total > layout.pages.length) {
    notes.push(
      `The document has ${total} pages; only the first ${layout.pages.length} were read (the server's page limit).`,
    );
  }
  const message = notes.length > 0 ? notes.join(' ') : null;
  const ok = layout.pages.length - failed.length;
  return { layout, extra: { elementType: 'page', elementsProcessed: ok, credits: ok, message } };
}

/** The layout of a document, a video's sampled frames or an image. */
async function layoutOf(engines: LocalEngineSet, job: ExtractionJob): Promise<ReadLayout> {
  const { input, request } = job;
  if (input.family === 'document') return documentLayout(engines, job);
  if (input.family === 'video') {
    const video = await engines.video(input.bytes, { fps: request.videoFps, maxFrames: request.videoMaxFrames });
    return {
      layout: video.layout,
      extra: { elementType: 'video', elementsProcessed: 1, credits: Math.max(1, Math.ceil(video.durationS / 60)) },
    };
  }
  const layout = await engines.imageLayout(input.bytes);
  return { layout, extra: { elementType: 'image', elementsProcessed: 1, credits: 1 } };
}

/** An audio job: its transcription, or a schema filled from the transcript (all null without a speech model). */
async function runAudio(engines: LocalEngineSet, job: ExtractionJob): Promise<ExtractionOutput> {
  const audio = await engines.audio(job.input.bytes);
  const base = {
    elementType: 'audio' as const,
    elementsProcessed: 1,
    credits: Math.max(1, Math.ceil(audio.durationS / 60)),
    message: `${NO_SPEECH_MODEL} Voice activity: ${audio.vad}.`,
  };
  const transcription = job.domain?.startsWith('audio.transcription') || !job.schema;
  if (engines.readSpeech) {
    const speech = await engines.readSpeech(job.input, { durationS: audio.durationS, speech: audio.segments });
    const heard = {
      speechSeconds: billedSeconds(audio.durationS),
      message: heardNote(speech, audio.durationS, audio.vad),
    };
    if (transcription) return { ...base, ...heard, response: audioTranscription(audio.durationS, speech.segments) };
    const hints = { ...(job.domain ? { domain: job.domain } : {}), ...(job.prompt ? { prompt: job.prompt } : {}) };
    const layout = transcriptLayout(speech);
    const filled = engines.extract(layout, job.schema!, {
      confidence: job.request.confidence,
      grounding: false,
      hints,
    });
    return { ...base, ...heard, response: withFieldMetadata(filled, layout, { ...job.request, grounding: false }) };
  }
  if (transcription) return { ...base, response: audioTranscription(audio.durationS, audio.segments) };
  // A custom schema over audio: nothing can be read offline, so every field is null (never invented).
  const empty = engines.extract({ pages: [] }, job.schema!, { confidence: false, grounding: false, hints: {} });
  return { ...base, response: empty.data };
}

/** `video.transcription`: the scenes' on-screen text, with what was said in each when a speech model hears it. */
async function runVideoTranscription(engines: LocalEngineSet, job: ExtractionJob): Promise<ExtractionOutput> {
  const video = await engines.video(job.input.bytes, {
    fps: job.request.videoFps,
    maxFrames: job.request.videoMaxFrames,
  });
  const located = video.hasAudio ? ((await engines.audio(job.input.bytes).catch(() => null))?.segments ?? null) : null;
  const usage = {
    elementType: 'video' as const,
    elementsProcessed: 1,
    credits: Math.max(1, Math.ceil(video.durationS / 60)),
  };
  if (video.hasAudio && engines.readSpeech) {
    const speech = await engines.readSpeech(job.input, { durationS: video.durationS, speech: located });
    return {
      ...usage,
      response: videoTranscription(video.durationS, video.sceneChanges, video.layout, speech.segments),
      speechSeconds: billedSeconds(video.durationS),
      message: `On-screen text was read from sampled frames. ${heardNote(speech, video.durationS, null)}`,
    };
  }
  return {
    ...usage,
    response: videoTranscription(video.durationS, video.sceneChanges, video.layout, located),
    message: `On-screen text was read from sampled frames. ${NO_SPEECH_MODEL}`,
  };
}

/** One job: audio and video transcriptions apart; otherwise a proposed schema, markdown or the filled schema. */
async function runLocal(engines: LocalEngineSet, logger: Logger, job: ExtractionJob): Promise<ExtractionOutput> {
  if (job.kind === 'audio' || job.input.family === 'audio') return runAudio(engines, job);
  if (job.kind === 'video' && job.domain?.startsWith('video.transcription')) {
    return runVideoTranscription(engines, job);
  }
  const { layout, extra } = await layoutOf(engines, job);
  const usage = {
    elementType: extra.elementType ?? 'image',
    elementsProcessed: extra.elementsProcessed ?? 1,
    credits: extra.credits ?? 1,
    message: extra.message ?? null,
  };
  if (job.kind === 'image_schema' || !job.schema) {
    const proposed = engines.proposeSchema(layout);
    return { ...usage, response: schemaResponse(proposed, schemaHash(proposed), INTERFACE_VERSION) };
  }
  if (job.domain === 'document.markdown' && !job.request.jsonSchema) {
    return { ...usage, response: markdownPages(layout) };
  }
  const hints = { ...(job.domain ? { domain: job.domain } : {}), ...(job.prompt ? { prompt: job.prompt } : {}) };
  const result = engines.extract(layout, job.schema, {
    confidence: job.request.confidence,
    grounding: job.request.grounding,
    hints,
  });
  logger.debug('extracted', { domain: job.domain, pages: layout.pages.length });
  return { ...usage, response: withFieldMetadata(result, layout, job.request) };
}

/** Reads an input into a layout without filling a schema (audio: its transcript, when a speech model hears it). */
async function readLocal(
  engines: LocalEngineSet,
  input: ExtractionInput,
  request: PredictionRequest,
): Promise<ReadResult> {
  const job: ExtractionJob = {
    kind: 'document',
    model: 'prism-1',
    domain: null,
    schema: null,
    prompt: null,
    request,
    input,
  };
  if (input.family === 'audio') {
    const audio = await engines.audio(input.bytes);
    if (engines.readSpeech) {
      const speech = await engines.readSpeech(input, { durationS: audio.durationS, speech: audio.segments });
      return {
        layout: transcriptLayout(speech),
        elementType: 'audio',
        elementsProcessed: 1,
        message: heardNote(speech, audio.durationS, audio.vad),
        speechSeconds: billedSeconds(audio.durationS),
      };
    }
    return { layout: { pages: [] }, elementType: 'audio', elementsProcessed: 1, message: NO_SPEECH_MODEL };
  }
  const { layout, extra } = await layoutOf(engines, job);
  return {
    layout,
    elementType: extra.elementType ?? 'image',
    elementsProcessed: extra.elementsProcessed ?? 1,
    message: extra.message ?? null,
  };
}

/** What the usage message says of speech a transcription model read. */
function heardNote(speech: ReadSpeech, durationS: number, vad: string | null): string {
  const pieces = speech.pieces > 1 ? ` in ${speech.pieces} pieces` : '';
  const activity = vad ? ` Voice activity: ${vad}.` : '';
  const seconds = billedSeconds(durationS);
  return `Transcribed by ${speech.model}${pieces}; ${speech.segments.length} timed segments; ${seconds} s of audio heard.${activity}`;
}

/** Width and height of a character on the transcript's page: boxes there are nominal (speech has no page). */
const CHAR_W = 8;
const LINE_H = 20;

/**
 * A transcript as a one-page layout (a line per segment, words in reading order), for the schema extractor and
 * for plain reads. Its boxes only order the words: grounding is not offered for audio.
 */
export function transcriptLayout(speech: TimedSpeech): DocumentLayout {
  const lines: LayoutLine[] = speech.segments.map((segment, row) => {
    const y0 = row * LINE_H;
    let x = 0;
    const words: LayoutWord[] = segment.text
      .split(/\s+/)
      .filter(Boolean)
      .map((text) => {
        const box = { x0: x, y0, x1: x + text.length * CHAR_W, y1: y0 + LINE_H - 4 };
        x = box.x1 + CHAR_W;
        return { text, box, confidence: 1 };
      });
    return {
      text: segment.text,
      confidence: 1,
      words,
      box: { x0: 0, y0, x1: Math.max(0, x - CHAR_W), y1: y0 + LINE_H - 4 },
    };
  });
  const width = Math.max(0, ...lines.map((l) => l.box.x1));
  const page: LayoutPage = {
    index: 0,
    width,
    height: lines.length * LINE_H,
    source: 'text-layer',
    lines,
    status: 'ok',
  };
  return { pages: [page] };
}
