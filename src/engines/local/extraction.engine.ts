/**
 * `prism-1` on the embedded engines: the ExtractionEngine the predictions service runs when no upstream model is
 * configured. It turns the input into a DocumentLayout (OCR of an image, the text layer or OCR of PDF pages, OCR of
 * sampled video frames), then fills the schema from the layout with the deterministic extractor, or builds the
 * special responses of the markdown and transcription domains. Audio gets duration and speech segments; the words
 * themselves need a speech model: with a transcription model configured (a SpeechTranscriber) `audio.transcription`
 * carries its timed text, without one we say so instead of inventing words.
 */
import { invalidDocument } from '../pdf/pdfjs-loader';
import { AllPagesFailedError } from '../../domain/errors';
import type { PredictionKind } from '../../domain/prediction';
import { INTERFACE_VERSION } from '../../domain/version';
import { schemaHash } from '../../lib/schema-hash';
import type { Logger } from '../../lib/logger';
import type { ExtractionEngine, ExtractionInput, ExtractionJob, ExtractionOutput } from '../extraction-engine';
import {
  audioTranscription,
  markdownPages,
  schemaResponse,
  videoTranscription,
  withFieldMetadata,
  type SpeechSegment,
} from '../output-shapes';
import type { DocumentLayout, ExtractionResult, JsonSchema } from '../types';

export const LOCAL_MODELS = ['prism-1'] as const;
const NO_SPEECH_MODEL =
  'Speech was located but not transcribed: transcription needs an upstream speech model (see PRISM_MODELS_FILE).';

/** Timed text of speech, as a transcription model heard it (times in seconds from the start). */
export interface TimedSpeech {
  text: string;
  segments: Required<SpeechSegment>[];
  /** The model that transcribed it (its catalogue id), for the usage message. */
  model: string;
}

/** Turns audio into timed text on a transcription model (see src/gateway/transcriptions/speech-transcriber.ts). */
export type SpeechTranscriber = (audio: ExtractionInput) => Promise<TimedSpeech>;

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
  /** The transcription model's ear, when the models file names one; absent: speech is located, not read. */
  transcribe?: SpeechTranscriber | null;
  extract(
    layout: DocumentLayout,
    schema: JsonSchema,
    options: { confidence: boolean; grounding: boolean; hints: { domain?: string; prompt?: string } },
  ): ExtractionResult;
  proposeSchema(layout: DocumentLayout): JsonSchema;
  close(): Promise<void>;
}

export function createLocalExtraction(engines: LocalEngineSet, logger: Logger): ExtractionEngine {
  async function layoutOf(job: ExtractionJob): Promise<{ layout: DocumentLayout; extra: Partial<ExtractionOutput> }> {
    const { input, request } = job;
    if (input.family === 'document') {
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

  async function runAudio(job: ExtractionJob): Promise<ExtractionOutput> {
    const audio = await engines.audio(job.input.bytes);
    const base = {
      elementType: 'audio' as const,
      elementsProcessed: 1,
      credits: Math.max(1, Math.ceil(audio.durationS / 60)),
      message: `${NO_SPEECH_MODEL} Voice activity: ${audio.vad}.`,
    };
    if (job.domain?.startsWith('audio.transcription') || !job.schema) {
      if (engines.transcribe) {
        const speech = await engines.transcribe(job.input);
        const message = `Transcribed by ${speech.model}; ${speech.segments.length} timed segments. Voice activity: ${audio.vad}.`;
        return { ...base, message, response: audioTranscription(audio.durationS, speech.segments) };
      }
      return { ...base, response: audioTranscription(audio.durationS, audio.segments) };
    }
    // A custom schema over audio: nothing can be read offline, so every field is null (never invented).
    const empty = engines.extract({ pages: [] }, job.schema, { confidence: false, grounding: false, hints: {} });
    return { ...base, response: empty.data };
  }

  async function runVideoTranscription(job: ExtractionJob): Promise<ExtractionOutput> {
    const video = await engines.video(job.input.bytes, {
      fps: job.request.videoFps,
      maxFrames: job.request.videoMaxFrames,
    });
    const speech = video.hasAudio ? ((await engines.audio(job.input.bytes).catch(() => null))?.segments ?? null) : null;
    return {
      response: videoTranscription(video.durationS, video.sceneChanges, video.layout, speech),
      elementType: 'video',
      elementsProcessed: 1,
      credits: Math.max(1, Math.ceil(video.durationS / 60)),
      message: `On-screen text was read from sampled frames. ${NO_SPEECH_MODEL}`,
    };
  }

  return {
    models: LOCAL_MODELS,

    async validateInput(kind: PredictionKind, input: ExtractionInput) {
      if (kind === 'audio' || kind === 'video') {
        const durationS = await engines.validateMedia(input.bytes);
        return { maxCredits: Math.max(1, Math.ceil((durationS ?? 0) / 60)) };
      }
      if (kind === 'document' && input.bytes.length === 0) throw invalidDocument('the file is empty');
      if (kind === 'document' && input.family === 'document') {
        return { maxCredits: Math.max(1, await engines.validatePdf(input.bytes)) };
      }
      await engines.validateImage(input.bytes);
      return { maxCredits: 1 };
    },

    async run(job) {
      if (job.kind === 'audio' || job.input.family === 'audio') return runAudio(job);
      if (job.kind === 'video' && job.domain?.startsWith('video.transcription')) return runVideoTranscription(job);
      const { layout, extra } = await layoutOf(job);
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
    },

    async read(input, request) {
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
        await engines.audio(input.bytes);
        return { layout: { pages: [] }, elementType: 'audio', elementsProcessed: 1, message: NO_SPEECH_MODEL };
      }
      const { layout, extra } = await layoutOf(job);
      return {
        layout,
        elementType: extra.elementType ?? 'image',
        elementsProcessed: extra.elementsProcessed ?? 1,
        message: extra.message ?? null,
      };
    },

    fill(layout, schema, options) {
      return withFieldMetadata(engines.extract(layout, schema, { ...options, hints: {} }), layout, options);
    },

    close: () => engines.close(),
  };
}
