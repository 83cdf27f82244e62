/**
 * Where the ffmpeg and ffprobe binaries are.
 *
 * Order: explicit paths from config, then a system build (`/usr/bin`, `/usr/local/bin`, `/opt/homebrew/bin`: the
 * distribution's receives security fixes), then the static binaries shipped inside the @ffmpeg-installer /
 * @ffprobe-installer npm packages (a 2018 ffmpeg and a 2023 ffprobe) so a plain `npm ci` works offline. Those parse
 * untrusted media with years of unfixed CVEs, so which one runs, and its version, is logged at start
 * ({@link describeMediaTools}; docs/security.md). Paths come in as options because only src/config reads the
 * environment.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Absolute paths of the two binaries the media engines run. */
export interface MediaTools {
  ffmpeg: string;
  ffprobe: string;
  /** Address-space limit of every run, in MiB; 0 or absent: none. */
  memoryLimitMb?: number;
  /** Where each binary came from. */
  origin?: { ffmpeg: ToolOrigin; ffprobe: ToolOrigin };
}

/** `configured` (FFMPEG_PATH / FFPROBE_PATH), `system` (a distribution build) or `bundled` (the npm package's). */
export type ToolOrigin = 'configured' | 'system' | 'bundled';

/** Overrides for {@link resolveMediaTools}; usually `FFMPEG_PATH` / `FFPROBE_PATH` read by src/config. */
export interface MediaToolsOptions {
  ffmpegPath?: string | undefined;
  ffprobePath?: string | undefined;
  /** Address-space limit of every run, in MiB (`PRISM_MEDIA_MEMORY_MB`). */
  memoryLimitMb?: number | undefined;
  /** Checked for the system binaries; replaceable in tests. */
  exists?: (file: string) => boolean;
}

const SYSTEM_DIRS = ['/usr/bin', '/usr/local/bin', '/opt/homebrew/bin'] as const;
const SYSTEM = { ffmpeg: '/usr/bin/ffmpeg', ffprobe: '/usr/bin/ffprobe' } as const;
const NPM_PACKAGE = { ffmpeg: '@ffmpeg-installer/ffmpeg', ffprobe: '@ffprobe-installer/ffprobe' } as const;

/**
 * Picks the ffmpeg and ffprobe to run.
 * @throws Error naming the missing npm package when neither an override, a system binary nor the package exists.
 */
export function resolveMediaTools(opts: MediaToolsOptions = {}): MediaTools {
  const exists = opts.exists ?? isExecutable;
  const pick = (tool: keyof typeof NPM_PACKAGE, configured: string | undefined): [string, ToolOrigin] => {
    if (configured) return [configured, 'configured'];
    const system = SYSTEM_DIRS.map((dir) => path.join(dir, tool)).find((file) => exists(file));
    return system ? [system, 'system'] : [npmBinary(tool), 'bundled'];
  };
  const [ffmpeg, ffmpegOrigin] = pick('ffmpeg', opts.ffmpegPath);
  const [ffprobe, ffprobeOrigin] = pick('ffprobe', opts.ffprobePath);
  return {
    ffmpeg,
    ffprobe,
    ...(opts.memoryLimitMb ? { memoryLimitMb: opts.memoryLimitMb } : {}),
    origin: { ffmpeg: ffmpegOrigin, ffprobe: ffprobeOrigin },
  };
}

/** What runs: each binary's path, origin and the first line of its `-version` (null when it cannot say). */
export async function describeMediaTools(
  tools: MediaTools,
): Promise<Record<'ffmpeg' | 'ffprobe', { path: string; origin: ToolOrigin | null; version: string | null }>> {
  const version = (file: string): Promise<string | null> =>
    new Promise((resolve) => {
      execFile(file, ['-version'], { timeout: 5000 }, (error, stdout) =>
        resolve(error ? null : (String(stdout).split('\n')[0]?.trim() ?? null)),
      );
    });
  const [ffmpeg, ffprobe] = await Promise.all([version(tools.ffmpeg), version(tools.ffprobe)]);
  return {
    ffmpeg: { path: tools.ffmpeg, origin: tools.origin?.ffmpeg ?? null, version: ffmpeg },
    ffprobe: { path: tools.ffprobe, origin: tools.origin?.ffprobe ?? null, version: ffprobe },
  };
}

function npmBinary(tool: keyof typeof NPM_PACKAGE): string {
  const name = NPM_PACKAGE[tool];
  try {
    const mod = createRequire(__filename)(name) as { path?: unknown };
    if (typeof mod.path === 'string') return mod.path;
  } catch {
    // fall through to the error below
  }
  throw new Error(`No ${tool} binary: install ${SYSTEM[tool]} (apt-get install ffmpeg) or the npm package ${name}`);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
