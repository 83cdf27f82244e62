/**
 * The embedded engines one level below `prism-1`, as the agent tools use them: OCR one image, read or render PDF
 * pages, sample video frames, analyse audio, fill a schema from a layout. The SDK (src/agents/sdk.ts) hands this port
 * to tools as `ctx.vision`; build-extraction-engine.ts implements it over the same engine instances as `prism-1`
 * (one OCR pool, one VAD session). Defined here, below both, so the engines implement it without importing the
 * agent runtime.
 */
import type { TimedSpeech } from './local/extraction.engine';
import type { AudioAnalysis } from './media/types';
import type { DocumentLayout, JsonSchema, LayoutPage } from './types';

/** A sampled video frame. */
export interface SampledFrame {
  index: number;
  timeS: number;
  png: Buffer;
  width: number;
  height: number;
}

/** What the audio engine learns about a recording; never contains invented words. */
export interface AudioFacts {
  durationS: number | null;
  format: string;
  codec: string;
  channels: number;
  sampleRate: number;
  vad: string;
  speechSegments: { startS: number; endS: number }[];
  speechS: number;
  /** Why there is no transcript (no speech-to-text model runs offline). */
  transcriptMessage: string;
}

/** The embedded engines, as tools use them. Every method throws an AppError (`invalid_media`, …) on bad input. */
export interface VisionPort {
  /** OCRs one image into a page of lines and words with boxes. */
  ocrImage(image: Buffer): Promise<LayoutPage>;
  /** Reads a PDF (text layer, OCR for scanned pages); failed pages carry `status: 'error'`. */
  readDocument(
    pdf: Buffer,
    options: { pageIndices: number[] | null; dpi: number | null },
  ): Promise<{ pageCount: number; pages: LayoutPage[] }>;
  /** Renders one 0-based PDF page to PNG. */
  renderPage(pdf: Buffer, pageIndex: number, dpi: number): Promise<{ png: Buffer; width: number; height: number }>;
  sampleFrames(
    video: Buffer,
    options: { fps: number | null; maxFrames: number | null },
  ): Promise<{ durationS: number | null; frames: SampledFrame[]; sceneChangesS: number[]; hasAudio: boolean }>;
  analyzeAudio(audio: Buffer): Promise<AudioFacts>;
  /**
   * What was said, in timed segments, on the models file's transcription model.
   * @throws 400 naming the missing model when the models file names none (words are never invented).
   */
  transcribeSpeech(audio: { bytes: Buffer; mimeType: string; filename: string | null }): Promise<TimedSpeech>;
  /** Fills a JSON schema from a layout with the deterministic extractor: fields it cannot find are null. */
  fillSchema(
    layout: DocumentLayout,
    schema: JsonSchema,
    hints: { domain?: string; prompt?: string },
  ): { data: Record<string, unknown>; confidence: Record<string, number> };
}

/** The audio engine's analysis as the port states it: camelCase segments, the detector's note in `vad`. */
export function audioFacts(a: AudioAnalysis): AudioFacts {
  return {
    durationS: a.durationS,
    format: a.format,
    codec: a.codec,
    channels: a.channels,
    sampleRate: a.sampleRate,
    vad: a.vadNote ? `${a.vad} (${a.vadNote})` : a.vad,
    speechSegments: a.speechSegments.map((s) => ({ startS: s.start_s, endS: s.end_s })),
    speechS: a.speechS,
    transcriptMessage: a.transcriptMessage,
  };
}
