/**
 * The local audio engine: what a recording is (duration, channels, rate) and where its speech is.
 *
 * Audio is decoded once by ffmpeg to 16 kHz mono float32 PCM and handed to a voice-activity detector: Silero when its
 * npm packages are installed, otherwise the dependency-free energy detector; the result names the one that ran. No
 * speech-to-text model runs offline, so the transcript is always null with a message saying so — never invented.
 */
import { energyVadScores } from './energy-vad';
import { invalidMedia, toMediaError } from './media-errors';
import { inputArgs } from './container-format';
import { resolveMediaTools, type MediaTools, type MediaToolsOptions } from './media-tools';
import { createProbeEngine } from './probe.engine';
import { runTool } from './run-tool';
import { loadSileroVad, SILERO_PACKAGES, type SileroLoad, type SileroVad } from './silero-vad';
import { withTempInput } from './temp-input';
import { suppressPureTones } from './tone-guard';
import type { AudioAnalysis, AudioStreamInfo, MediaProbe, VadKind } from './types';
import { DEFAULT_SEGMENT_OPTIONS, scoresToSegments, speechSeconds, type SegmentOptions } from './vad-segments';

export const PCM_SAMPLE_RATE = 16_000;

/** Why `transcript` is null, in every audio result. */
export const NO_TRANSCRIPT_MESSAGE =
  'No transcript: speech-to-text needs a speech recognition model and none runs offline in Prism. ' +
  'Configure an OpenAI-compatible upstream that transcribes audio to get one.';

export interface AudioEngineOptions extends MediaToolsOptions {
  tools?: MediaTools;
  /** `auto` (default) uses Silero when installed, else the energy detector; `silero` fails when it is missing. */
  vad?: 'auto' | VadKind;
  /** Where to look for the Silero packages (default: this module's node_modules chain). */
  sileroResolvePaths?: string[];
  /** Only the first this many seconds are decoded for speech detection (default 3600). */
  maxAnalysisS?: number;
  /** Deadline for one ffmpeg run (default 120 s). */
  timeoutMs?: number;
  tmpDir?: string;
  segments?: Partial<SegmentOptions>;
}

/** Metadata and speech segments for audio (or the first audio stream of a video). */
export interface AudioEngine {
  /** @throws BadRequestError `invalid_media` when the bytes are not audio or video. */
  probe(bytes: Buffer): Promise<MediaProbe>;
  /**
   * @throws BadRequestError `invalid_media` when there is no decodable audio stream.
   * @throws Error when `vad: 'silero'` was asked for and its packages are missing.
   */
  analyze(bytes: Buffer): Promise<AudioAnalysis>;
  /** Releases the Silero session, if one was loaded. */
  close(): Promise<void>;
}

/** Builds an {@link AudioEngine}; the Silero model is loaded on first use. */
export function createAudioEngine(opts: AudioEngineOptions = {}): AudioEngine {
  const tools = opts.tools ?? resolveMediaTools(opts);
  const prober = createProbeEngine(tools, opts.tmpDir === undefined ? {} : { tmpDir: opts.tmpDir });
  const mode = opts.vad ?? 'auto';
  const maxAnalysisS = opts.maxAnalysisS ?? 3600;
  const segmentOptions = { ...DEFAULT_SEGMENT_OPTIONS, ...opts.segments };
  let silero: Promise<SileroLoad> | undefined;

  const detectorFor = async (): Promise<SileroLoad> => {
    if (mode === 'energy') return { ok: false, reason: 'the energy detector was configured' };
    silero ??= loadSileroVad(opts.sileroResolvePaths);
    const loaded = await silero;
    if (!loaded.ok && mode === 'silero') {
      throw new Error(
        `Silero VAD is unavailable: ${loaded.reason}. Install ${SILERO_PACKAGES.model} and ` +
          `${SILERO_PACKAGES.runtime}, or configure the 'energy' or 'auto' detector.`,
      );
    }
    return loaded;
  };

  const analyzeFile = async (file: string): Promise<AudioAnalysis> => {
    const info = await prober.probeFile(file);
    const audio = info.streams.find((s): s is AudioStreamInfo => s.kind === 'audio');
    if (!audio) throw invalidMedia('The media has no audio stream');
    const pcm = await decodePcm(file);
    const detector = await detectorFor();
    const { scores, frameS } = detector.ok
      ? await sileroScores(detector.vad, pcm)
      : energyVadScores(pcm, PCM_SAMPLE_RATE);
    const analyzedS = Math.round((pcm.length / PCM_SAMPLE_RATE) * 1000) / 1000;
    const speechSegments = scoresToSegments(scores, frameS, analyzedS, segmentOptions);
    return {
      durationS: info.durationS,
      format: info.format,
      codec: audio.codec,
      channels: audio.channels,
      sampleRate: audio.sampleRate,
      vad: detector.ok ? 'silero' : 'energy',
      ...(!detector.ok && mode === 'auto' ? { vadNote: `Silero VAD not used: ${detector.reason}` } : {}),
      analyzedS,
      speechSegments,
      speechS: speechSeconds(speechSegments),
      transcript: null,
      transcriptMessage: NO_TRANSCRIPT_MESSAGE,
    };
  };

  const decodePcm = async (file: string): Promise<Float32Array> => {
    const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...inputArgs(file), '-map', '0:a:0', '-vn'];
    args.push('-t', String(maxAnalysisS), '-f', 'f32le', '-ac', '1', '-ar', String(PCM_SAMPLE_RATE), 'pipe:1');
    try {
      const { stdout } = await runTool(tools.ffmpeg, args, {
        memoryLimitMb: tools.memoryLimitMb,
        timeoutMs: opts.timeoutMs ?? 120_000,
        maxStdoutBytes: Math.ceil((maxAnalysisS + 1) * PCM_SAMPLE_RATE * 4),
      });
      const pcm = new Float32Array(Math.floor(stdout.length / 4));
      new Uint8Array(pcm.buffer).set(stdout.subarray(0, pcm.length * 4));
      return pcm;
    } catch (err) {
      throw toMediaError(err, file, 'audio');
    }
  };

  const sileroScores = async (vad: SileroVad, pcm: Float32Array) => {
    const { scores, frameS } = await vad.scores(pcm);
    return { scores: suppressPureTones(scores, frameS, pcm, PCM_SAMPLE_RATE), frameS };
  };

  return {
    probe: (bytes) => prober.probe(bytes),
    analyze: (bytes) => withTempInput(bytes, analyzeFile, opts.tmpDir),
    async close() {
      const loaded = await silero;
      silero = undefined;
      if (loaded?.ok) await loaded.vad.close();
    },
  };
}
