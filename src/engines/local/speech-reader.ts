/**
 * Long recordings on a transcription model: a server takes one file of bounded size per call (OpenAI: 25 MiB), and
 * one call per hour of audio is slow, so a recording longer than one piece is cut into pieces (audio-pieces.ts),
 * sent `parallel` at a time, and the pieces' timed text stitched back in order.
 *
 * Where to cut: at a pause when the voice-activity detector found one near the piece's end (the piece then ends in
 * silence and the next starts there, no overlap needed); otherwise at the piece length, with `overlapS` seconds sent
 * twice so a word cut in half is whole in one of them. Stitching moves each piece's times by its start, keeps a
 * segment only in the piece that holds its middle (the boundary is the middle of the overlap), and joins two
 * segments with the same text that touch across a boundary (a sentence the cut split heard twice).
 *
 * A recording of one piece or less goes to the model as it came (a video's as its audio track, cut to WAV; a file
 * over 24 MiB re-encoded the same way).
 */
import type { SpeechSegment } from '../output-shapes';
import { withAudioPieces, type AudioWindow, type CutPiece } from '../media/audio-pieces';
import type { MediaTools } from '../media/media-tools';
import type { ExtractionInput } from '../extraction-engine';

/** Timed text of speech, as a transcription model heard it (times in seconds from the start). */
export interface TimedSpeech {
  text: string;
  segments: Required<SpeechSegment>[];
  /** The model that transcribed it (its catalogue id), for the usage message. */
  model: string;
  /** What hearing it cost the caller, when it was billed by itself (an agent tool call; billed-speech.ts). */
  billed?: { seconds: number; costDollars: number };
}

/** Turns audio into timed text on a transcription model, one call (see src/gateway/transcriptions). */
export type SpeechTranscriber = (audio: ExtractionInput) => Promise<TimedSpeech>;

export interface SpeechReaderOptions {
  /** Longest piece sent in one call, seconds. */
  pieceS: number;
  /** Seconds sent twice at a cut that falls in speech. */
  overlapS: number;
  /** Pieces transcribed at once. */
  parallel: number;
}

export const DEFAULT_SPEECH_READER: SpeechReaderOptions = { pieceS: 600, overlapS: 1, parallel: 4 };

/** What is known about the recording before it is read. */
export interface SpeechFacts {
  durationS: number;
  /** Where the voice-activity detector heard speech; null when it did not run (cuts then overlap). */
  speech: readonly SpeechSegment[] | null;
}

/** Timed text of the whole recording, and how many calls it took. */
export interface ReadSpeech extends TimedSpeech {
  pieces: number;
}

/** The largest file sent as it came: under OpenAI's 25 MiB with room for the form around it. */
const PASS_THROUGH_BYTES = 24 * 1024 * 1024;

/** A pause at least this long may end a piece. */
const MIN_PAUSE_S = 0.3;
/** A piece cut at a pause is at least this share of the piece length. */
const MIN_PIECE_SHARE = 0.5;

/** A planned piece: its window, and the times it is responsible for (its segments' middles fall in there). */
export interface PlannedPiece extends AudioWindow {
  keepFromS: number;
  keepToS: number;
}

/** The pieces a recording of `durationS` is sent in. */
export function planPieces(facts: SpeechFacts, options: SpeechReaderOptions): PlannedPiece[] {
  const { durationS } = facts;
  const pieceS = Math.max(1, options.pieceS);
  if (!(durationS > pieceS)) return [{ startS: 0, lengthS: durationS, keepFromS: 0, keepToS: Infinity }];
  const overlapS = Math.min(Math.max(0, options.overlapS), pieceS / 4);
  const pieces: PlannedPiece[] = [];
  let startS = 0;
  let keepFromS = 0;
  while (startS + pieceS < durationS) {
    const pause = facts.speech ? lastPause(facts.speech, startS + pieceS * MIN_PIECE_SHARE, startS + pieceS) : null;
    if (pause !== null) {
      pieces.push({ startS, lengthS: pause - startS, keepFromS, keepToS: pause });
      startS = pause;
      keepFromS = pause;
      continue;
    }
    const endS = startS + pieceS;
    const boundary = endS - overlapS / 2;
    pieces.push({ startS, lengthS: pieceS, keepFromS, keepToS: boundary });
    startS = endS - overlapS;
    keepFromS = boundary;
  }
  pieces.push({ startS, lengthS: durationS - startS, keepFromS, keepToS: Infinity });
  return pieces;
}

/** The middle of the last pause of at least MIN_PAUSE_S between `fromS` and `toS`, or null. */
function lastPause(speech: readonly SpeechSegment[], fromS: number, toS: number): number | null {
  let best: number | null = null;
  for (let i = 0; i < speech.length; i += 1) {
    const pauseStart = speech[i]!.endS;
    const pauseEnd = speech[i + 1]?.startS ?? Infinity;
    if (pauseEnd - pauseStart < MIN_PAUSE_S) continue;
    const middle = Number.isFinite(pauseEnd) ? (pauseStart + pauseEnd) / 2 : pauseStart + MIN_PAUSE_S / 2;
    if (middle >= fromS && middle <= toS) best = middle;
  }
  // Before the first speech is a pause too.
  const first = speech[0]?.startS ?? Infinity;
  if (best === null && first >= MIN_PAUSE_S && first / 2 >= fromS && first / 2 <= toS) best = first / 2;
  return best;
}

/** Stitches the pieces' timed text (each relative to its piece) into one timeline. */
export function stitchPieces(planned: readonly PlannedPiece[], heard: readonly TimedSpeech[]): TimedSpeech {
  const segments: Required<SpeechSegment>[] = [];
  planned.forEach((piece, i) => {
    for (const s of heard[i]?.segments ?? []) {
      const startS = round3(s.startS + piece.startS);
      const endS = round3(s.endS + piece.startS);
      const middle = (startS + endS) / 2;
      if (middle < piece.keepFromS || middle >= piece.keepToS || s.text === '') continue;
      const last = segments[segments.length - 1];
      if (last && last.text === s.text && startS <= last.endS + 0.001) {
        last.endS = Math.max(last.endS, endS);
        continue;
      }
      segments.push({ startS, endS, text: s.text });
    }
  });
  return {
    text: segments.map((s) => s.text).join(' '),
    segments,
    model: heard[0]?.model ?? '',
  };
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Whole seconds billed for `durationS` of audio: every started second, at least one. */
export const billedSeconds = (durationS: number): number => Math.max(1, Math.ceil(durationS - 1e-6));

/** Runs `work` over `items` with at most `limit` running at once; results in the items' order. */
async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await work(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/** Reads whole recordings on `transcribe`, one piece per call. */
export type SpeechReader = (input: ExtractionInput, facts: SpeechFacts) => Promise<ReadSpeech>;

export function createSpeechReader(
  tools: MediaTools,
  transcribe: SpeechTranscriber,
  options: SpeechReaderOptions = DEFAULT_SPEECH_READER,
): SpeechReader {
  return async (input, facts) => {
    const planned = planPieces(facts, options);
    // One piece of audio goes as it came (the server reads the caller's own file and its name), unless it is too big
    // for a server to take: then it is re-encoded like a piece (16 kHz mono WAV, 32 KB a second).
    if (planned.length === 1 && input.family === 'audio' && input.bytes.length <= PASS_THROUGH_BYTES) {
      return { ...(await transcribe(input)), pieces: 1 };
    }
    const heard = await withAudioPieces(tools, input.bytes, (cut: CutPiece) =>
      inParallel(planned, options.parallel, async (piece, index) =>
        transcribe({
          bytes: await cut(piece),
          mimeType: 'audio/wav',
          family: 'audio',
          filename: `${baseName(input.filename)}.part${index + 1}.wav`,
        }),
      ),
    );
    return { ...stitchPieces(planned, heard), pieces: planned.length };
  };
}

function baseName(filename: string | null): string {
  const name = filename?.replace(/\.[^.]*$/, '') ?? '';
  return name === '' ? 'audio' : name;
}
