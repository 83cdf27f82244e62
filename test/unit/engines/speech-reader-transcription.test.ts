/**
 * How a long recording is cut for a transcription model and put back together (engines/local/speech-reader.ts):
 * at a pause the voice-activity detector found near a piece's end (no overlap), else at the piece length with the
 * overlap sent twice; stitching moves each piece's times by its start, keeps a segment only in the piece holding
 * its middle, and joins the two halves of a sentence a cut split.
 */
import { billedSeconds, planPieces, stitchPieces, type TimedSpeech } from '../../../src/engines/local/speech-reader';

const OPTIONS = { pieceS: 60, overlapS: 1, parallel: 2 };

const heard = (segments: [number, number, string][]): TimedSpeech => ({
  text: segments.map((s) => s[2]).join(' '),
  segments: segments.map(([startS, endS, text]) => ({ startS, endS, text })),
  model: 'whisper',
});

describe('planPieces', () => {
  it('sends a recording of one piece or less whole', () => {
    expect(planPieces({ durationS: 60, speech: null }, OPTIONS)).toEqual([
      { startS: 0, lengthS: 60, keepFromS: 0, keepToS: Infinity },
    ]);
  });

  it('without voice activity cuts at the piece length, 1 s sent twice, each owning up to the overlap middle', () => {
    expect(planPieces({ durationS: 130, speech: null }, OPTIONS)).toEqual([
      { startS: 0, lengthS: 60, keepFromS: 0, keepToS: 59.5 },
      { startS: 59, lengthS: 60, keepFromS: 59.5, keepToS: 118.5 },
      { startS: 118, lengthS: 12, keepFromS: 118.5, keepToS: Infinity },
    ]);
  });

  it('cuts in the middle of the last pause of the piece’s second half, without overlap', () => {
    const speech = [
      { startS: 0, endS: 40 },
      { startS: 44, endS: 58 },
      { startS: 59.1, endS: 100 },
    ];
    const pieces = planPieces({ durationS: 100, speech }, OPTIONS);
    // The 0.3 s pause at 58.0–59.1 is the last of the window 30–60: cut at 58.55.
    expect(pieces).toEqual([
      { startS: 0, lengthS: 58.55, keepFromS: 0, keepToS: 58.55 },
      { startS: 58.55, lengthS: 41.45, keepFromS: 58.55, keepToS: Infinity },
    ]);
  });

  it('falls back to an overlapping cut when speech runs through the second half', () => {
    const speech = [{ startS: 0, endS: 100 }];
    expect(planPieces({ durationS: 100, speech }, OPTIONS).map((p) => p.startS)).toEqual([0, 59]);
  });
});

describe('stitchPieces', () => {
  it('offsets, keeps each segment once and joins a sentence split by the cut', () => {
    const planned = planPieces({ durationS: 130, speech: null }, OPTIONS);
    const stitched = stitchPieces(planned, [
      heard([
        [0, 10, 'one'],
        [50, 60, 'split'],
      ]),
      // Starts at 59: "split" again (59–65), then its own speech; the piece's tail 58.5–60 is the next one's head.
      heard([
        [0, 6, 'split'],
        [20, 30, 'two'],
        [58.8, 60, 'tail'],
      ]),
      heard([
        [0, 2, 'tail'],
        [5, 8, 'three'],
      ]),
    ]);
    expect(stitched.segments).toEqual([
      { startS: 0, endS: 10, text: 'one' },
      { startS: 50, endS: 65, text: 'split' },
      { startS: 79, endS: 89, text: 'two' },
      { startS: 117.8, endS: 120, text: 'tail' },
      { startS: 123, endS: 126, text: 'three' },
    ]);
    expect(stitched.text).toBe('one split two tail three');
    expect(stitched.model).toBe('whisper');
  });
});

describe('billedSeconds', () => {
  it('bills every started second, at least one', () => {
    expect([0, 0.2, 1, 2.3, 240].map(billedSeconds)).toEqual([1, 1, 1, 3, 240]);
  });
});
