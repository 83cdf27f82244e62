/**
 * The extraction part of the composition root: one set of embedded engines (`prism-1` for extraction and the
 * toolkit the agent tools call) behind the routed engine that sends generate requests naming an upstream model of
 * the catalogue upstream, and the plain reads the embedders and the decision engine make through it.
 *
 * Its closers stop the routed engine and, when a caller replaced the local engine, the embedded engines the
 * routed one no longer owns.
 */
import type { Config } from '../config/config';
import { defaultPredictionRequest, type PredictionRequest } from '../domain/prediction';
import type { ExtractionEngine } from '../engines/extraction-engine';
import { createLocalEngineKit, type LocalEngineKit } from '../engines/local/build-extraction-engine';
import type { DocumentLayout, LayoutPage } from '../engines/types';
import type { ModelCatalogue } from '../gateway/catalogue/model-catalogue';
import type { UpstreamClient } from '../gateway/upstream/upstream-client';
import { createRoutedExtractionEngine } from '../gateway/upstream/upstream-extraction';
import { upstreamSpeechTranscriber } from '../gateway/transcriptions/speech-transcriber';
import type { CloseStep } from '../lib/close-all';
import type { Logger } from '../lib/logger';

export interface ExtractionPart {
  engine: ExtractionEngine;
  /** The embedded engines: `prism-1` itself and the toolkit the agent tools call. */
  kit: LocalEngineKit;
  /** The layout of a document or an image, read with defaults only. */
  readText: (bytes: Buffer, family: 'image' | 'document') => Promise<DocumentLayout>;
  /** The text of each page of a PDF. */
  pdfText: (pdf: Buffer) => Promise<string[]>;
  closers: CloseStep[];
}

export interface ExtractionPartDeps {
  config: Config;
  logger: Logger;
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  /** Replaces the local extraction engine (tests of the service layer use a scripted one). */
  override?: ExtractionEngine | undefined;
}

export function createExtractionPart({
  config,
  logger,
  catalogue,
  upstream,
  override,
}: ExtractionPartDeps): ExtractionPart {
  const kit = createLocalEngineKit({
    ocrWorkers: config.engines.ocrWorkers,
    ocrEngine: config.engines.ocrEngine,
    ocrThreads: config.engines.ocrThreads,
    ocrDecoder: config.engines.ocrDecoder,
    ocrHead: config.engines.ocrHead,
    documentMaxPages: config.engines.documentMaxPages,
    ffmpegPath: config.engines.ffmpegPath,
    ffprobePath: config.engines.ffprobePath,
    mediaMemoryMb: config.engines.mediaMemoryMb,
    documentDeadlineMs: config.engines.documentDeadlineMs,
    // `audio.transcription` reads speech on the models file's transcription model, when it names one.
    transcriber: upstreamSpeechTranscriber(catalogue, upstream),
    speechPieces: config.transcription,
    logger,
  });
  const localEngine = override ?? kit.engine;
  // Generate requests naming an upstream model from the catalogue go there; `prism-1` stays on the local engines.
  const engine = createRoutedExtractionEngine({
    local: localEngine,
    catalogue,
    upstream,
    assistModel: config.engines.extractUpstreamModel,
    logger,
  });
  const readText = async (bytes: Buffer, family: 'image' | 'document'): Promise<DocumentLayout> =>
    (
      await engine.read(
        { bytes, mimeType: family === 'document' ? 'application/pdf' : 'image/png', family, filename: null },
        PLAIN_READ,
      )
    ).layout;
  const pdfText = async (pdf: Buffer): Promise<string[]> =>
    (await readText(pdf, 'document')).pages.map((p) => p.lines.map((l) => l.text).join('\n'));
  return {
    engine,
    kit,
    readText,
    pdfText,
    closers: [
      { name: 'embedded engines', run: () => (override ? kit.engine.close() : undefined) },
      { name: 'engine', run: () => engine.close() },
    ],
  };
}

/** How embedders ask the engines to read a document or image: defaults only. */
const PLAIN_READ: PredictionRequest = defaultPredictionRequest();

export const EMPTY_PAGE: LayoutPage = { index: 0, width: 0, height: 0, source: 'ocr', lines: [], status: 'ok' };
