/**
 * What the predictions service needs from a model that turns one input into JSON: the contract between the
 * service and the engines (local today; an upstream VLM through the gateway's catalogue later).
 */
import type { DocumentLayout, JsonSchema } from './types';
import type { ElementType, PredictionKind, PredictionRequest } from '../domain/prediction';

export interface ExtractionInput {
  bytes: Buffer;
  /** Sniffed MIME type (`image/png`, `application/pdf`, `video/mp4`, …). */
  mimeType: string;
  family: 'image' | 'document' | 'video' | 'audio';
  filename: string | null;
}

export interface ExtractionJob {
  kind: PredictionKind;
  model: string;
  domain: string | null;
  /** The schema to fill (the caller's `json_schema`, else the domain's); null for schema proposal. */
  schema: JsonSchema | null;
  /** The domain's instructions, if any (upstream models read them; the local extractor uses them as hints). */
  prompt: string | null;
  request: PredictionRequest;
  input: ExtractionInput;
  /** Progress for long inputs (pages, frames). */
  onProgress?: (done: number, total: number) => void;
}

export interface ExtractionOutput {
  response: unknown;
  elementsProcessed: number;
  elementType: ElementType;
  /** Whole credits to bill; failed pages are not counted. */
  credits: number;
  /** Notes for the caller (failed pages, what could not be done offline); null when there is nothing to say. */
  message: string | null;
  /**
   * Seconds of audio a transcription model heard for this output (every started second of the recording, however
   * many pieces it was sent in), billed at that model's `per_minute` price; absent or 0: none.
   */
  speechSeconds?: number;
}

/** What `validateInput` learns about an input on the way: the most credits reading it can bill. */
export interface InputMeasure {
  /**
   * Upper bound of {@link ExtractionOutput.credits}: the pages a PDF can have read (capped by the server's page
   * limit), 1 for an image, the started minutes of audio or video (1 when the duration is unknown).
   */
  maxCredits: number;
  /** Upper bound of {@link ExtractionOutput.speechSeconds}: what a transcription model may hear (0: nothing). */
  speechSeconds?: number;
}

/** What an input reads as, page by page (for chat methods that return text rather than a filled schema). */
export interface ReadResult {
  layout: DocumentLayout;
  elementsProcessed: number;
  elementType: ElementType;
  message: string | null;
  /** Seconds of audio a transcription model heard to read it (see {@link ExtractionOutput.speechSeconds}). */
  speechSeconds?: number;
}

export interface ExtractionEngine {
  /** Model ids this engine serves (e.g. `prism-1`). */
  models: readonly string[];
  /**
   * Cheap decode check before anything is stored, so bad input is a 400 and leaves no record behind.
   * Also measures the input, so a price can be held before the work starts; `domain` says whether a video's speech
   * will be transcribed (`video.transcription`).
   * @throws AppError `invalid_media` / `invalid_document`.
   */
  validateInput(kind: PredictionKind, input: ExtractionInput, domain?: string | null): Promise<InputMeasure>;
  /** Reads the input into a layout (OCR, text layer, frames) without filling a schema. */
  read(input: ExtractionInput, request: PredictionRequest): Promise<ReadResult>;
  /** Fills `schema` from a layout already read. */
  fill(
    layout: DocumentLayout,
    schema: JsonSchema,
    options: { confidence: boolean; grounding: boolean },
  ): Record<string, unknown>;
  /** @throws AllPagesFailedError when every page failed; other AppErrors for bad input. */
  run(job: ExtractionJob): Promise<ExtractionOutput>;
  close(): Promise<void>;
}
