/**
 * Guests' files expire: anonymous uploads live PRISM_GUEST_FILE_TTL_H hours, then a periodic
 * sweep deletes their records and, when nothing else refers to them, their bytes. The first sweep runs at start;
 * then every quarter of the lifetime, at least once a second and at most every ten minutes. Guests also stop
 * seeing their own expired files at once (the files service checks age on access).
 */
import type { Logger } from '../lib/logger';
import type { FilesService } from '../services/files.service';
import { startPeriodicSweep, type PeriodicSweep } from './periodic-sweep';

export type GuestFileSweep = PeriodicSweep;

export function startGuestFileSweep(
  files: Pick<FilesService, 'sweepGuestFiles'>,
  ttlMs: number,
  logger: Logger,
): GuestFileSweep | null {
  if (ttlMs <= 0) return null;
  const everyMs = Math.min(10 * 60_000, Math.max(1000, Math.floor(ttlMs / 4)));
  const work = async (): Promise<void> => {
    const removed = await files.sweepGuestFiles();
    if (removed > 0) logger.info('deleted expired guest files', { removed });
  };
  return startPeriodicSweep(work, everyMs, logger, 'guest file sweep failed');
}
