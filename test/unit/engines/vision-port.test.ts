/**
 * The agent tools' VisionPort states the audio engine's analysis in its own terms: camelCase speech segments, the
 * detector's fallback note folded into `vad`, no transcript field (the port never carries invented words).
 */
import type { AudioAnalysis } from '../../../src/engines/media/types';
import { audioFacts } from '../../../src/engines/vision-port';

const analysis: AudioAnalysis = {
  durationS: 12.5,
  format: 'wav',
  codec: 'pcm_s16le',
  channels: 1,
  sampleRate: 16000,
  vad: 'energy',
  vadNote: 'silero model not available',
  analyzedS: 12.5,
  speechSegments: [
    { start_s: 0.5, end_s: 2.25 },
    { start_s: 4, end_s: 9.75 },
  ],
  speechS: 7.5,
  transcript: null,
  transcriptMessage: 'No speech-to-text model runs offline.',
};

describe('audioFacts', () => {
  it('maps segments to camelCase and folds the detector note into vad', () => {
    expect(audioFacts(analysis)).toEqual({
      durationS: 12.5,
      format: 'wav',
      codec: 'pcm_s16le',
      channels: 1,
      sampleRate: 16000,
      vad: 'energy (silero model not available)',
      speechSegments: [
        { startS: 0.5, endS: 2.25 },
        { startS: 4, endS: 9.75 },
      ],
      speechS: 7.5,
      transcriptMessage: 'No speech-to-text model runs offline.',
    });
  });

  it('keeps vad as the detector name when there is no note', () => {
    const { vadNote: _note, ...plain } = analysis;
    expect(audioFacts({ ...plain, vad: 'silero' }).vad).toBe('silero');
  });
});
