/**
 * Cuts the speech track of an audio or video file into pieces a transcription server accepts: each piece is a
 * stretch `[startS, startS + lengthS)` of the first audio stream, re-encoded by ffmpeg as 16 kHz mono 16-bit WAV
 * (the format every OpenAI-compatible `/audio/transcriptions` server reads, and 32 KB a second, so a 10-minute piece
 * stays under OpenAI's 25 MiB). The caller's bytes go to one private temp file for all the pieces (temp-input.ts:
 * sniffed demuxer, text refused), and each piece is cut only when `use` asks for it, so no more than the pieces being
 * transcribed at once are held in memory.
 */
import { inputArgs } from './container-format';
import { toMediaError } from './media-errors';
import type { MediaTools } from './media-tools';
import { runTool } from './run-tool';
import { withTempInput } from './temp-input';

/** What the pieces are encoded as. */
export const PIECE_SAMPLE_RATE = 16_000;
const WAV_BYTES_PER_SECOND = PIECE_SAMPLE_RATE * 2;

/** A stretch of the recording, in seconds from its start. */
export interface AudioWindow {
  startS: number;
  lengthS: number;
}

/** Cuts one window to WAV bytes. @throws BadRequestError `invalid_media` when the track cannot be decoded. */
export type CutPiece = (window: AudioWindow) => Promise<Buffer>;

/**
 * Runs `use` with a cutter over `bytes`, then removes the temp file (even when `use` throws).
 * @throws BadRequestError `invalid_media` for bytes that are not audio or video.
 */
export function withAudioPieces<T>(
  tools: MediaTools,
  bytes: Buffer,
  use: (cut: CutPiece) => Promise<T>,
  options: { timeoutMs?: number; tmpDir?: string } = {},
): Promise<T> {
  return withTempInput(
    bytes,
    (file) =>
      use(async ({ startS, lengthS }) => {
        const args = ['-nostdin', '-hide_banner', '-loglevel', 'error'];
        args.push('-ss', startS.toFixed(3), '-t', lengthS.toFixed(3), ...inputArgs(file));
        args.push('-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(PIECE_SAMPLE_RATE), '-c:a', 'pcm_s16le');
        args.push('-f', 'wav', 'pipe:1');
        try {
          const { stdout } = await runTool(tools.ffmpeg, args, {
            memoryLimitMb: tools.memoryLimitMb,
            timeoutMs: options.timeoutMs ?? 120_000,
            maxStdoutBytes: Math.ceil((lengthS + 1) * WAV_BYTES_PER_SECOND) + 4096,
          });
          return wavWithSizes(stdout);
        } catch (err) {
          throw toMediaError(err, file, 'audio');
        }
      }),
    options.tmpDir,
  );
}

/**
 * ffmpeg writing WAV to a pipe cannot seek back to fill in the RIFF and data sizes, so it leaves them at their
 * maximum; strict readers (and some servers) refuse that. The sizes are set from the bytes actually written.
 */
function wavWithSizes(wav: Buffer): Buffer {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF') return wav;
  wav.writeUInt32LE(wav.length - 8, 4);
  let at = 12;
  while (at + 8 <= wav.length) {
    const id = wav.toString('latin1', at, at + 4);
    if (id === 'data') {
      wav.writeUInt32LE(wav.length - at - 8, at + 4);
      break;
    }
    at += 8 + wav.readUInt32LE(at + 4);
  }
  return wav;
}
