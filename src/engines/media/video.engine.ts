/**
 * The local video engine: sample frames, find scene cuts, and OCR frames into a layout.
 *
 * One ffmpeg run does both jobs: the decoded stream is split, one branch resampled to the requested rate and written
 * as PNGs to stdout, the other scored for scene changes; named `showinfo` filters report each branch's timestamps on
 * stderr. Rates and counts are clamped so a request cannot ask for unbounded work.
 */
import { throwIfCancelled } from '../../lib/cancel';
import { currentWorkSignal } from '../../lib/work-tenant';
import { framesToLayout } from './video-layout';
import { splitPngStream, showinfoTime } from './ffmpeg-output';
import { invalidMedia, toMediaError } from './media-errors';
import { inputArgs } from './container-format';
import { resolveMediaTools, type MediaTools, type MediaToolsOptions } from './media-tools';
import { createProbeEngine } from './probe.engine';
import { runTool } from './run-tool';
import { withTempInput } from './temp-input';
import type {
  FrameRecognizer,
  MediaProbe,
  SampledVideo,
  SampleFramesOptions,
  VideoLayout,
  VideoStreamInfo,
} from './types';

/** Defaults and bounds for frame sampling (`video_fps`, `video_max_frames`). */
export const FRAME_SAMPLING = {
  fps: { default: 1, min: 0.01, max: 30 },
  maxFrames: { default: 16, min: 1, max: 128 },
  sceneThreshold: { default: 0.3, min: 0.01, max: 1 },
  maxWidth: { default: 1280, min: 16, max: 3840 },
} as const;

const MAX_SCENE_CHANGES = 10_000;

export interface VideoEngineOptions extends MediaToolsOptions {
  /** Already-resolved binaries; `ffmpegPath`/`ffprobePath` are used otherwise. */
  tools?: MediaTools;
  /** Deadline for one ffmpeg run (default 120 s). */
  timeoutMs?: number;
  tmpDir?: string;
}

/** Frames, scene cuts and OCR layout for video inputs. */
export interface VideoEngine {
  /** @throws BadRequestError `invalid_media` when the bytes are not audio or video. */
  probe(bytes: Buffer): Promise<MediaProbe>;
  /** @throws BadRequestError `invalid_media` when the bytes hold no decodable video stream. */
  sampleFrames(bytes: Buffer, opts?: SampleFramesOptions): Promise<SampledVideo>;
  /** Samples frames and OCRs them; consecutive frames with identical text collapse into the first. */
  videoLayout(bytes: Buffer, opts: SampleFramesOptions, ocr: FrameRecognizer): Promise<VideoLayout>;
}

/** Builds a {@link VideoEngine} on ffmpeg/ffprobe (see {@link resolveMediaTools} for which ones). */
export function createVideoEngine(opts: VideoEngineOptions = {}): VideoEngine {
  const tools = opts.tools ?? resolveMediaTools(opts);
  const prober = createProbeEngine(tools, opts.tmpDir === undefined ? {} : { tmpDir: opts.tmpDir });
  const timeoutMs = opts.timeoutMs ?? 120_000;

  const sampleFile = async (file: string, options: SampleFramesOptions): Promise<SampledVideo> => {
    const info = await prober.probeFile(file);
    const video = info.streams.find((s): s is VideoStreamInfo => s.kind === 'video');
    if (!video) throw invalidMedia('The media has no video stream');
    const o = clampSampling(options);
    const fps = effectiveFps(o.fps, o.maxFrames, info.durationS);
    const frameTimes: number[] = [];
    const sceneTimes: number[] = [];
    const frameChain = `fps=${fps},showinfo@frames,scale='min(iw,${o.maxWidth})':-2[f]`;
    const graph = o.detectScenes
      ? `[0:v]setpts=PTS-STARTPTS,split=2[a][b];[a]${frameChain};` +
        `[b]scale=320:-2,select='gt(scene,${o.sceneThreshold})',showinfo@scene[s]`
      : `[0:v]setpts=PTS-STARTPTS,${frameChain}`;
    const args = [
      '-nostdin',
      '-hide_banner',
      '-nostats',
      '-loglevel',
      'info',
      ...inputArgs(file),
      '-filter_complex',
      graph,
    ];
    args.push('-map', '[f]', '-frames:v', String(o.maxFrames), '-f', 'image2pipe', '-c:v', 'png', 'pipe:1');
    if (o.detectScenes) args.push('-map', '[s]', '-f', 'null', '-');
    let stdout: Buffer;
    try {
      ({ stdout } = await runTool(tools.ffmpeg, args, {
        timeoutMs,
        memoryLimitMb: tools.memoryLimitMb,
        maxStdoutBytes: o.maxFrames * frameBudget(video, o.maxWidth),
        onStderrLine: (line) => {
          const f = showinfoTime(line, 'frames');
          if (f !== null) frameTimes.push(f);
          const s = showinfoTime(line, 'scene');
          if (s !== null && sceneTimes.length < MAX_SCENE_CHANGES) sceneTimes.push(s);
        },
      }));
    } catch (err) {
      throw toMediaError(err, file, 'video');
    }
    const images = splitPngStream(stdout).slice(0, o.maxFrames);
    if (images.length === 0) throw invalidMedia('The video has no decodable frames');
    const rel = (t: number): number => Math.round(Math.max(0, t) * 1000) / 1000;
    return {
      durationS: info.durationS,
      effectiveFps: fps,
      frames: images.map((img, index) => ({
        index,
        timeS: rel(frameTimes[index] ?? index / fps),
        ...img,
      })),
      sceneChangesS: [...new Set(sceneTimes.map(rel))].sort((x, y) => x - y),
      hasAudio: info.streams.some((s) => s.kind === 'audio'),
    };
  };

  const sampleFrames = (bytes: Buffer, options: SampleFramesOptions = {}): Promise<SampledVideo> =>
    withTempInput(bytes, (file) => sampleFile(file, options), opts.tmpDir);

  return {
    probe: (bytes) => prober.probe(bytes),
    sampleFrames,
    async videoLayout(bytes, options, ocr) {
      const sampled = await sampleFrames(bytes, options);
      // Cancelled while ffmpeg sampled (it runs to its end): read no frame; framesToLayout checks between frames.
      throwIfCancelled(currentWorkSignal());
      const pages = await framesToLayout(sampled.frames, ocr);
      return {
        pages,
        durationS: sampled.durationS,
        sceneChangesS: sampled.sceneChangesS,
        hasAudio: sampled.hasAudio,
        framesSampled: sampled.frames.length,
      };
    },
  };
}

/** Fills defaults and clamps every sampling option into its bounds (NaN counts as absent). */
export function clampSampling(opts: SampleFramesOptions): Required<SampleFramesOptions> {
  const pick = (value: number | undefined, b: { default: number; min: number; max: number }): number =>
    value === undefined || !Number.isFinite(value) ? b.default : Math.min(b.max, Math.max(b.min, value));
  return {
    fps: pick(opts.fps, FRAME_SAMPLING.fps),
    maxFrames: Math.floor(pick(opts.maxFrames, FRAME_SAMPLING.maxFrames)),
    sceneThreshold: pick(opts.sceneThreshold, FRAME_SAMPLING.sceneThreshold),
    maxWidth: Math.floor(pick(opts.maxWidth, FRAME_SAMPLING.maxWidth)),
    detectScenes: opts.detectScenes ?? true,
  };
}

/** Lowers `fps` so that `maxFrames` samples cover the whole clip instead of only its start. */
export function effectiveFps(fps: number, maxFrames: number, durationS: number | null): number {
  if (durationS === null || durationS * fps <= maxFrames) return fps;
  return Math.max(FRAME_SAMPLING.fps.min, Math.floor((maxFrames / durationS) * 1e6) / 1e6);
}

/** Worst-case PNG size of one scaled frame (uncompressed RGB plus headroom); bounds ffmpeg's stdout. */
function frameBudget(video: VideoStreamInfo, maxWidth: number): number {
  const width = Math.min(video.width, maxWidth);
  const height = Math.ceil((Math.max(video.width, video.height) * width) / video.width);
  return width * height * 3 + 1024 * 1024;
}
