/**
 * Shapes the local video and audio engines return.
 *
 * Kept apart from the engines so services and tests can name them without pulling in child-process code. Times are
 * seconds from the first frame (video) or first sample (audio), so they line up with what a player shows even when a
 * container starts at a non-zero timestamp (MPEG-TS usually does).
 */
import type { DocumentLayout, LayoutPage } from '../types';

/** One video stream as ffprobe describes it. */
export interface VideoStreamInfo {
  kind: 'video';
  index: number;
  codec: string;
  width: number;
  height: number;
  /** Average frame rate; null when the container does not say. */
  fps: number | null;
}

/** One audio stream as ffprobe describes it. */
export interface AudioStreamInfo {
  kind: 'audio';
  index: number;
  codec: string;
  channels: number;
  sampleRate: number;
}

export type MediaStreamInfo = VideoStreamInfo | AudioStreamInfo;

/** What `probe` learns about a media file without decoding it. */
export interface MediaProbe {
  /** Duration in seconds; null when neither the container nor a stream gives one. */
  durationS: number | null;
  /** Container name(s) as ffprobe reports them, e.g. `mov,mp4,m4a,3gp,3g2,mj2` or `wav`. */
  format: string;
  /** Start time of the container in seconds (0 for most files). */
  startS: number;
  /** Video and audio streams only; subtitles, data and cover art are left out. */
  streams: MediaStreamInfo[];
}

/** One sampled frame. */
export interface VideoFrame {
  /** 0-based position among the sampled frames. */
  index: number;
  timeS: number;
  png: Buffer;
  width: number;
  height: number;
}

/** Options for {@link VideoEngine.sampleFrames}; out-of-range values are clamped, not rejected. */
export interface SampleFramesOptions {
  /** Frames per second to sample (spec `video_fps`); default 1, clamped to 0.01..30. */
  fps?: number;
  /** Most frames to return (spec `video_max_frames`); default 16, clamped to 1..128. */
  maxFrames?: number;
  /** Scene-change threshold for ffmpeg's `scene` score, 0..1; default 0.3. */
  sceneThreshold?: number;
  /** Frames wider than this are scaled down (aspect kept); default 1280. */
  maxWidth?: number;
  /** Score every frame for scene cuts (default true); false skips that work and leaves `sceneChangesS` empty. */
  detectScenes?: boolean;
}

/** Frames, scene cuts and duration of one video. */
export interface SampledVideo {
  durationS: number | null;
  /** The rate actually used: lowered from `fps` so `maxFrames` frames span the whole clip. */
  effectiveFps: number;
  frames: VideoFrame[];
  /** Timestamps where the picture changes abruptly (ffmpeg `select='gt(scene,T)'`); empty when not detected. */
  sceneChangesS: number[];
  /** Whether the file also carries an audio stream (read from the same probe). */
  hasAudio: boolean;
}

/** The OCR engine as `videoLayout` needs it: one PNG in, one page of words out. */
export interface FrameRecognizer {
  recognize(png: Buffer): Promise<LayoutPage>;
}

/** A DocumentLayout whose pages are OCR'd frames (with `timeS`), plus what the sampling saw. */
export interface VideoLayout extends DocumentLayout {
  durationS: number | null;
  sceneChangesS: number[];
  hasAudio: boolean;
  /** Frames sampled before consecutive duplicates were dropped. */
  framesSampled: number;
}

/** One stretch of speech, in seconds (snake_case because it goes onto the wire unchanged). */
export interface SpeechSegment {
  start_s: number;
  end_s: number;
}

/** Which voice-activity detector produced the segments. */
export type VadKind = 'silero' | 'energy';

/** What the audio engine knows about a recording. Never contains invented text. */
export interface AudioAnalysis {
  durationS: number | null;
  format: string;
  codec: string;
  channels: number;
  sampleRate: number;
  vad: VadKind;
  /** Set when `auto` wanted Silero but had to use the energy detector, saying why. */
  vadNote?: string;
  /** Seconds of audio the detector looked at (less than the duration when `maxAnalysisS` cut it). */
  analyzedS: number;
  speechSegments: SpeechSegment[];
  /** Total seconds inside `speechSegments`. */
  speechS: number;
  /** Always null: no speech-to-text model runs offline. */
  transcript: null;
  /** Says why `transcript` is null and what would fill it. */
  transcriptMessage: string;
}
