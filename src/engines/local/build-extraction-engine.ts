/**
 * Builds `prism-1` from the embedded engines: OCR, images and PDFs (document-engines.ts), video and audio (media), and
 * the schema-guided extractor, adapted to the LocalEngineSet the local extraction engine runs on; the same engines
 * serve the agent tools as their VisionPort (vision-port.ts). The composition root calls `createLocalEngineKit`
 * once; everything heavy (OCR workers, the VAD model) starts lazily.
 */
import os from 'node:os';
import { BadRequestError } from '../../domain/errors';
import type { Logger } from '../../lib/logger';
import type { ExtractionEngine } from '../extraction-engine';
import { extractFromLayout, proposeSchema } from '../extract';
import { createLocalEngines } from './document-engines';
import type { OcrEngineKind } from '../ocr/ocr.engine';
import type { OcrStats } from '../ocr/ocr-engine.types';
import type { OcrDecoder } from '../ocr/ppocr.engine';
import type { OcrHead } from '../ocr/ppocr-head';
import { createLocalExtraction, type LocalEngineSet, type SpeechTranscriber } from './extraction.engine';
import { createSpeechReader, DEFAULT_SPEECH_READER, type SpeechReaderOptions } from './speech-reader';
import { createAudioEngine, createVideoEngine, describeMediaTools, resolveMediaTools } from '../media';
import { audioFacts, type VisionPort } from '../vision-port';

export interface LocalExtractionOptions {
  /** OCR pool size; 0 means one per core. */
  ocrWorkers: number;
  /** Which OCR reads images (default tesseract). */
  ocrEngine?: OcrEngineKind;
  /** onnxruntime threads for PP-OCR; 0 means one per core. */
  ocrThreads?: number;
  /** PP-OCR's CTC decoder (default greedy). */
  ocrDecoder?: OcrDecoder;
  /** PP-OCR's output layer (default shipped; see ppocr-head.ts). */
  ocrHead?: OcrHead;
  documentMaxPages: number;
  ffmpegPath: string | undefined;
  ffprobePath: string | undefined;
  /** Longest a document request may read pages for, ms (later pages are not started); 0: no limit. */
  documentDeadlineMs?: number;
  /** Address-space limit of every ffmpeg/ffprobe run, in MiB (0: none). */
  mediaMemoryMb?: number;
  /** Reads speech on the models file's transcription model; absent: audio gets located speech only. */
  transcriber?: SpeechTranscriber | null;
  /** How long recordings are cut for it (piece length, overlap, pieces at once). */
  speechPieces?: Partial<SpeechReaderOptions>;
  logger: Logger;
}

export function createLocalExtractionEngine(options: LocalExtractionOptions): ExtractionEngine {
  return createLocalEngineKit(options).engine;
}

/** The embedded engines as the composition root holds them. */
export interface LocalEngineKit {
  engine: ExtractionEngine;
  /** The agent tools' view of the same engines. */
  toolkit: VisionPort;
  /** The duration in seconds of an audio or video file (ffprobe); null when it gives none. @throws invalid_media */
  audioDuration: (bytes: Buffer) => Promise<number | null>;
  /** The shared OCR pool's counters (reads run, reads cancelled) and reads pending now. */
  ocrStats(): OcrStats;
}

/** `prism-1` plus the toolkit over the same engine instances (one OCR pool, one VAD session). */
export function createLocalEngineKit(options: LocalExtractionOptions): LocalEngineKit {
  const { logger } = options;
  const local = createLocalEngines({
    logger,
    ...(options.ocrWorkers > 0 ? { ocrWorkers: options.ocrWorkers } : {}),
    ocr: {
      engine: options.ocrEngine ?? 'tesseract',
      ppocr: {
        threads: options.ocrThreads || os.availableParallelism(),
        ...(options.ocrDecoder ? { decoder: options.ocrDecoder } : {}),
        ...(options.ocrHead ? { head: options.ocrHead } : {}),
      },
    },
    pdf: { maxPages: options.documentMaxPages },
  });
  const tools = resolveMediaTools({
    ...(options.ffmpegPath ? { ffmpegPath: options.ffmpegPath } : {}),
    ...(options.ffprobePath ? { ffprobePath: options.ffprobePath } : {}),
    ...(options.mediaMemoryMb ? { memoryLimitMb: options.mediaMemoryMb } : {}),
  });
  // Which ffmpeg parses untrusted media, and its version, go in the log; the bundled 2018 build gets a warning.
  void describeMediaTools(tools).then((described) => {
    const bundled = described.ffmpeg.origin === 'bundled' || described.ffprobe.origin === 'bundled';
    if (bundled) {
      logger.warn('media tools: a bundled static ffmpeg/ffprobe parses untrusted media; install a system ffmpeg', {
        ...described,
      });
    } else {
      logger.info('media tools', { ...described });
    }
  });
  const video = createVideoEngine({ tools });
  const audio = createAudioEngine({ tools });
  const readSpeech = options.transcriber
    ? createSpeechReader(tools, options.transcriber, { ...DEFAULT_SPEECH_READER, ...options.speechPieces })
    : null;

  const set: LocalEngineSet = {
    validateImage: async (bytes) => void (await local.image.inspect(bytes)),
    imageLayout: (bytes) => local.layoutFromImage(bytes),
    async validatePdf(bytes) {
      const doc = await local.pdf.open(bytes);
      const pages = Math.min(doc.pageCount, options.documentMaxPages);
      await doc.close();
      return pages;
    },
    pdfLayout: (bytes, { dpi, pageIndices, onProgress }) =>
      local.layoutFromPdf(bytes, {
        ...(dpi ? { dpi } : {}),
        ...(pageIndices ? { pageIndices } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(options.documentDeadlineMs ? { deadlineMs: Date.now() + options.documentDeadlineMs } : {}),
      }),
    validateMedia: async (bytes) => (await video.probe(bytes)).durationS,
    async video(bytes, { fps, maxFrames }) {
      const sampling = { ...(fps ? { fps } : {}), ...(maxFrames ? { maxFrames } : {}) };
      // One probe: the video engine's own, which also says whether there is an audio track.
      const layout = await video.videoLayout(bytes, sampling, local.ocr);
      return {
        layout: { pages: layout.pages },
        durationS: layout.durationS ?? 0,
        sceneChanges: layout.sceneChangesS,
        hasAudio: layout.hasAudio,
      };
    },
    async audio(bytes) {
      const analysis = await audio.analyze(bytes);
      return {
        durationS: analysis.durationS ?? analysis.analyzedS,
        segments: analysis.speechSegments.map((s) => ({ startS: s.start_s, endS: s.end_s })),
        vad: analysis.vadNote ? `${analysis.vad} (${analysis.vadNote})` : analysis.vad,
      };
    },
    readSpeech,
    extract: (layout, schema, opts) => extractFromLayout(layout, schema, opts),
    proposeSchema: (layout) => proposeSchema(layout),
    async close() {
      await Promise.allSettled([local.close(), audio.close()]);
    },
  };
  const toolkit: VisionPort = {
    async ocrImage(image) {
      const layout = await local.layoutFromImage(image);
      return layout.pages[0] ?? { index: 0, width: 0, height: 0, source: 'ocr', lines: [], status: 'ok' };
    },
    async readDocument(pdf, { pageIndices, dpi }) {
      const layout = await local.layoutFromPdf(pdf, {
        ...(dpi ? { dpi } : {}),
        ...(pageIndices ? { pageIndices } : {}),
      });
      return { pageCount: layout.pageCount, pages: layout.pages };
    },
    async renderPage(pdf, pageIndex, dpi) {
      const doc = await local.pdf.open(pdf);
      try {
        return await doc.render(pageIndex, dpi);
      } finally {
        await doc.close();
      }
    },
    sampleFrames: (bytes, { fps, maxFrames }) =>
      video.sampleFrames(bytes, { ...(fps ? { fps } : {}), ...(maxFrames ? { maxFrames } : {}) }),
    analyzeAudio: async (bytes) => audioFacts(await audio.analyze(bytes)),
    async transcribeSpeech({ bytes, mimeType, filename }) {
      if (!readSpeech) {
        throw new BadRequestError(
          'No transcription model is configured: add a `mode: transcription` model to PRISM_MODELS_FILE (docs/models.md).',
          null,
          'audio',
        );
      }
      const durationS = (await video.probe(bytes)).durationS ?? 0;
      const family = mimeType.startsWith('video/') ? 'video' : 'audio';
      return readSpeech({ bytes, mimeType, filename, family }, { durationS, speech: null });
    },
    fillSchema(layout, schema, hints) {
      const result = extractFromLayout(layout, schema, { confidence: true, grounding: false, hints });
      return { data: result.data, confidence: result.confidence };
    },
  };
  return {
    engine: createLocalExtraction(set, logger),
    toolkit,
    audioDuration: async (bytes) => (await video.probe(bytes)).durationS,
    ocrStats: () => local.ocr.stats(),
  };
}
