/**
 * Where the ffmpeg and ffprobe binaries are.
 *
 * Order: explicit paths from config, then the distribution's `/usr/bin` build (it receives security fixes), then the
 * static binaries shipped inside the @ffmpeg-installer / @ffprobe-installer npm packages (a 2018 ffmpeg and a 2023
 * ffprobe) so a plain `npm ci` works offline. Paths come in as options because only src/config reads the environment.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';

/** Absolute paths of the two binaries the media engines run. */
export interface MediaTools {
  ffmpeg: string;
  ffprobe: string;
  /** Address-space limit of every run, in MiB; 0 or absent: none. */
  memoryLimitMb?: number;
}

/** Overrides for {@link resolveMediaTools}; usually `FFMPEG_PATH` / `FFPROBE_PATH` read by src/config. */
export interface MediaToolsOptions {
  ffmpegPath?: string | undefined;
  ffprobePath?: string | undefined;
  /** Address-space limit of every run, in MiB (`PRISM_MEDIA_MEMORY_MB`). */
  memoryLimitMb?: number | undefined;
  /** Checked for the system binaries; replaceable in tests. */
  exists?: (file: string) => boolean;
}

const SYSTEM = { ffmpeg: '/usr/bin/ffmpeg', ffprobe: '/usr/bin/ffprobe' } as const;
const NPM_PACKAGE = { ffmpeg: '@ffmpeg-installer/ffmpeg', ffprobe: '@ffprobe-installer/ffprobe' } as const;

/**
 * Picks the ffmpeg and ffprobe to run.
 * @throws Error naming the missing npm package when neither an override, a system binary nor the package exists.
 */
export function resolveMediaTools(opts: MediaToolsOptions = {}): MediaTools {
  const exists = opts.exists ?? isExecutable;
  return {
    ffmpeg: opts.ffmpegPath ?? (exists(SYSTEM.ffmpeg) ? SYSTEM.ffmpeg : npmBinary('ffmpeg')),
    ffprobe: opts.ffprobePath ?? (exists(SYSTEM.ffprobe) ? SYSTEM.ffprobe : npmBinary('ffprobe')),
    ...(opts.memoryLimitMb ? { memoryLimitMb: opts.memoryLimitMb } : {}),
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
