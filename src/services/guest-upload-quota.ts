/**
 * The anonymous upload quota: how many files and bytes one client address may upload per UTC day on the gateway's
 * open files route. Without it a guest could fill the disk (uploads need no key there).
 *
 * Counters live in this process and only for the current day (yesterday's are dropped at the first upload of a new
 * day). A refused upload is not counted; an upload is counted once its bytes are staged, before it is committed.
 */
import { AppError } from '../domain/errors';

export interface GuestUploadQuota {
  /**
   * Counts one upload of `bytes` for `clientIp`.
   * @throws AppError 429 `guest_upload_quota` (Retry-After: seconds to the next UTC day) when it would pass a limit.
   */
  take(clientIp: string, bytes: number, nowMs?: number): void;
}

export interface GuestUploadQuotaOptions {
  /** Uploads per address per day (0: guests may not upload). */
  perDay: number;
  /** Bytes per address per day. */
  bytesPerDay: number;
}

const DAY_MS = 86_400_000;

export function createGuestUploadQuota(options: GuestUploadQuotaOptions): GuestUploadQuota {
  let day = -1;
  let used = new Map<string, { count: number; bytes: number }>();
  return {
    take(clientIp, bytes, nowMs = Date.now()) {
      const today = Math.floor(nowMs / DAY_MS);
      if (today !== day) {
        day = today;
        used = new Map();
      }
      const current = used.get(clientIp) ?? { count: 0, bytes: 0 };
      if (current.count + 1 > options.perDay || current.bytes + bytes > options.bytesPerDay) {
        throw new AppError(429, {
          message:
            `Anonymous uploads are limited to ${options.perDay} files and ${options.bytesPerDay} bytes per day ` +
            'per address. Sign up for an API key to upload more.',
          type: 'rate_limit_exceeded',
          code: 'guest_upload_quota',
          retryAfterSeconds: Math.max(1, Math.ceil(((today + 1) * DAY_MS - nowMs) / 1000)),
        });
      }
      used.set(clientIp, { count: current.count + 1, bytes: current.bytes + bytes });
    },
  };
}
