/**
 * Runs ffmpeg/ffprobe as a child process, safely.
 *
 * Media from callers is untrusted and the npm ffmpeg is old, so every run has a deadline, a cap on how much stdout it
 * may produce (a decompression bomb cannot fill memory), keeps only a tail of stderr, and never goes through a shell.
 * Failures come back as {@link ToolRunError} so the engines can decide which ones the caller caused.
 */
import { spawn } from 'node:child_process';

export interface RunToolOptions {
  /** Bytes written to stdin, then stdin is closed; stdin is /dev/null when absent. */
  stdin?: Buffer;
  /** Killed with SIGKILL after this long. */
  timeoutMs: number;
  /** Killed when stdout grows past this. */
  maxStdoutBytes: number;
  /** Called for every complete stderr line (ffmpeg's showinfo output is read this way). */
  onStderrLine?: (line: string) => void;
  /** Address-space limit in MiB (`ulimit -v` in a POSIX shell that then execs the tool); 0 or absent: none. */
  memoryLimitMb?: number | undefined;
}

export interface RunToolResult {
  stdout: Buffer;
  /** The last few KiB of stderr. */
  stderrTail: string;
}

export type ToolRunFailure = 'exit' | 'timeout' | 'output-limit' | 'spawn';

/** A run that did not finish cleanly; `stderrTail` holds the tool's last words. */
export class ToolRunError extends Error {
  constructor(
    readonly reason: ToolRunFailure,
    message: string,
    readonly stderrTail: string,
    readonly exitCode: number | null = null,
    /** Set when the tool was killed by a signal it did not get from us (a crash). */
    readonly signal: NodeJS.Signals | null = null,
  ) {
    super(message);
    this.name = 'ToolRunError';
  }
}

const STDERR_TAIL_CHARS = 8192;

/**
 * The command line that runs `file args…` under an address-space limit: `/bin/sh -c 'ulimit -v N && exec "$@"'`.
 * The arguments travel as positional parameters, never as shell text, so nothing in them is interpreted.
 */
export function withMemoryLimit(
  file: string,
  args: readonly string[],
  limitMb: number | undefined,
): [string, string[]] {
  if (!limitMb || limitMb <= 0 || process.platform === 'win32') return [file, [...args]];
  const kib = String(Math.floor(limitMb * 1024));
  return ['/bin/sh', ['-c', 'ulimit -v "$0" || exit 126; exec "$@"', kib, file, ...args]];
}

/** Runs `file args…` without a shell and resolves with its stdout once it exits with status 0. */
export function runTool(file: string, args: readonly string[], opts: RunToolOptions): Promise<RunToolResult> {
  return new Promise((resolve, reject) => {
    const [command, argv] = withMemoryLimit(file, args, opts.memoryLimitMb);
    const child = spawn(command, argv, { stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], windowsHide: true });
    const { stdout, stderr } = child;
    if (!stdout || !stderr) throw new Error('spawn gave no stdout/stderr pipes');
    const chunks: Buffer[] = [];
    let stdoutBytes = 0;
    let tail = '';
    let partial = '';
    let failure: ToolRunError | undefined;
    const fail = (err: ToolRunError): void => {
      failure ??= err;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => fail(new ToolRunError('timeout', `timed out after ${opts.timeoutMs} ms`, tail)),
      opts.timeoutMs,
    );

    stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > opts.maxStdoutBytes) {
        fail(new ToolRunError('output-limit', `output exceeds ${opts.maxStdoutBytes} bytes`, tail));
      } else {
        chunks.push(chunk);
      }
    });
    stderr.setEncoding('utf8');
    stderr.on('data', (text: string) => {
      tail = (tail + text).slice(-STDERR_TAIL_CHARS);
      if (!opts.onStderrLine) return;
      const lines = (partial + text).split(/\r?\n|\r/);
      partial = (lines.pop() ?? '').slice(-STDERR_TAIL_CHARS);
      lines.forEach((line) => opts.onStderrLine?.(line));
    });
    if (opts.stdin && child.stdin) {
      child.stdin.on('error', () => undefined); // EPIPE when the tool stops reading early; the exit code tells.
      child.stdin.end(opts.stdin);
    }

    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new ToolRunError('spawn', `cannot run ${file}: ${err.message}`, tail));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (partial && opts.onStderrLine) opts.onStderrLine(partial);
      if (failure) return reject(failure);
      if (code !== 0) {
        return reject(new ToolRunError('exit', `exited with ${code ?? signal ?? 'unknown'}`, tail, code, signal));
      }
      resolve({ stdout: Buffer.concat(chunks), stderrTail: tail });
    });
  });
}
