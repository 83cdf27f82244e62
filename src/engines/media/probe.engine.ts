/**
 * Reads what a media file is (container, duration, streams) with ffprobe, without decoding it.
 *
 * Both media engines start here: it rejects non-media early with `invalid_media` and gives the duration that frame
 * sampling and audio analysis plan with. Still images (PNG/JPEG "pipes") are not media for these engines.
 */
import { parseFfmpegInfo } from './ffmpeg-probe';
import { invalidMedia, lastMessage, toMediaError } from './media-errors';
import { inputArgs } from './container-format';
import type { MediaTools } from './media-tools';
import { runTool, ToolRunError } from './run-tool';
import { withTempInput } from './temp-input';
import type { MediaProbe, MediaStreamInfo } from './types';

/** Limits for one ffprobe run. */
export interface ProbeOptions {
  timeoutMs?: number;
  tmpDir?: string;
}

/** Reads container and stream facts. */
export interface ProbeEngine {
  /** @throws BadRequestError `invalid_media` for corrupt, unsupported or non-media input. */
  probe(bytes: Buffer): Promise<MediaProbe>;
  /** The same for a file already on disk (the engines reuse their temp file). */
  probeFile(file: string): Promise<MediaProbe>;
}

const STILL_IMAGE_FORMATS = /(_pipe|^image2|^tty)$/;

/** Builds a {@link ProbeEngine} on ffprobe, with ffmpeg's own summary as the fallback when ffprobe crashes. */
export function createProbeEngine(tools: MediaTools, opts: ProbeOptions = {}): ProbeEngine {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const probeFile = async (file: string): Promise<MediaProbe> => {
    const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', ...inputArgs(file)];
    let json: unknown;
    try {
      const { stdout } = await runTool(tools.ffprobe, args, {
        timeoutMs,
        maxStdoutBytes: 4 * 1024 * 1024,
        memoryLimitMb: tools.memoryLimitMb,
      });
      json = JSON.parse(stdout.toString('utf8'));
    } catch (err) {
      if (err instanceof ToolRunError && err.signal && err.reason === 'exit') return probeWithFfmpeg(file);
      throw toMediaError(err, file, 'media');
    }
    return checkMedia(parseProbe(json));
  };

  const probeWithFfmpeg = async (file: string): Promise<MediaProbe> => {
    const lines: string[] = [];
    const args = ['-nostdin', '-hide_banner', ...inputArgs(file)];
    const collect = (line: string): void => void (lines.length < 10_000 && lines.push(line));
    // Without an output ffmpeg always exits 1 after printing the input summary; the summary is what we want.
    try {
      await runTool(tools.ffmpeg, args, {
        timeoutMs,
        maxStdoutBytes: 1024,
        onStderrLine: collect,
        memoryLimitMb: tools.memoryLimitMb,
      });
    } catch (err) {
      if (!(err instanceof ToolRunError) || err.reason !== 'exit') throw toMediaError(err, file, 'media');
    }
    const parsed = parseFfmpegInfo(lines.join('\n'));
    if (!parsed) throw invalidMedia(`The media could not be decoded: ${lastMessage(lines.join('\n'), file)}`);
    return checkMedia(parsed);
  };
  return {
    probe: (bytes) => withTempInput(bytes, probeFile, opts.tmpDir),
    probeFile,
  };
}

interface RawStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  channels?: number;
  sample_rate?: string;
  duration?: string;
  disposition?: { attached_pic?: number };
}

/** Rejects probes that found no audio or video (still images, text, unknown data) with `invalid_media`. */
export function checkMedia(probe: MediaProbe): MediaProbe {
  if (STILL_IMAGE_FORMATS.test(probe.format) || probe.streams.length === 0) {
    throw invalidMedia(`The input is not audio or video (detected format: ${probe.format})`);
  }
  return probe;
}

/** Turns ffprobe's JSON into a {@link MediaProbe}. */
export function parseProbe(json: unknown): MediaProbe {
  const raw = (json ?? {}) as { format?: { format_name?: string; duration?: string; start_time?: string } };
  const rawStreams = ((json as { streams?: RawStream[] } | null)?.streams ?? []).filter(
    (s) => s.disposition?.attached_pic !== 1,
  );
  const format = raw.format?.format_name ?? 'unknown';
  const streams = rawStreams.map(toStream).filter((s): s is MediaStreamInfo => s !== null);
  const durations = [raw.format?.duration, ...rawStreams.map((s) => s.duration)].map(toNumber);
  const durationS = durations.find((d): d is number => d !== null && d > 0) ?? null;
  return { durationS, format, startS: Math.max(0, toNumber(raw.format?.start_time) ?? 0), streams };
}

function toStream(s: RawStream): MediaStreamInfo | null {
  const index = s.index ?? 0;
  const codec = s.codec_name ?? 'unknown';
  if (s.codec_type === 'video' && s.width && s.height) {
    const fps = toRate(s.avg_frame_rate) ?? toRate(s.r_frame_rate);
    return { kind: 'video', index, codec, width: s.width, height: s.height, fps };
  }
  if (s.codec_type === 'audio') {
    return { kind: 'audio', index, codec, channels: s.channels ?? 0, sampleRate: toNumber(s.sample_rate) ?? 0 };
  }
  return null;
}

function toRate(value: string | undefined): number | null {
  const [num, den] = (value ?? '').split('/').map(Number);
  if (num === undefined || den === undefined || !Number.isFinite(num) || !den) return null;
  const rate = num / den;
  return rate > 0 && rate < 1000 ? Math.round(rate * 1000) / 1000 : null;
}

function toNumber(value: string | undefined): number | null {
  if (value === undefined || value === 'N/A') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}
