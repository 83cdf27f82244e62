/**
 * The progress of `prism db copy` on stderr: rows copied of the total, the rate and the time left. On a terminal one
 * line redrawn in place (a bar, at most ten times a second); otherwise (a log, a pipe, a test) a plain line every
 * `everyMs`, and always one at the end, so a long copy in a CI log or under systemd still says how far it is.
 */

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface CopyProgress {
  /** `rows` more rows are done (copied, or found already there). */
  add(rows: number): void;
  /** The last line (and, on a terminal, the end of the redrawn one). */
  finish(): void;
}

const BAR = 24;

const clock = (seconds: number): string => {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
};

export function createCopyProgress(
  total: number,
  out: ProgressOutput,
  { everyMs = 5000, now = () => Date.now() }: { everyMs?: number; now?: () => number } = {},
): CopyProgress {
  const started = now();
  let done = 0;
  let lastDrawn = 0;
  const tty = out.isTTY === true;
  const line = (): string => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    const rate = done / seconds;
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const left = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
    const counts = `${done.toLocaleString('en')}/${total.toLocaleString('en')} rows (${(share * 100).toFixed(1)}%)`;
    const speed = `${Math.round(rate).toLocaleString('en')} rows/s`;
    if (!tty) return `copy: ${counts}, ${speed}, ${done >= total ? `${seconds.toFixed(1)} s` : `ETA ${clock(left)}`}`;
    const filled = Math.round(share * BAR);
    return `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}] ${counts} ${speed} ETA ${clock(left)}`;
  };
  return {
    add(rows) {
      done += rows;
      const at = now();
      if (at - lastDrawn < (tty ? 100 : everyMs)) return;
      lastDrawn = at;
      out.write(tty ? `\r${line()}\u001b[K` : `${line()}\n`);
    },
    finish() {
      out.write(tty ? `\r${line()}\u001b[K\n` : `${line()}\n`);
    },
  };
}
