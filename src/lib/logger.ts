/**
 * The structured logger: one JSON line per event on stderr (`{"level","time","message",...fields}`), filtered by
 * level (PRISM_LOG_LEVEL). pino writes the lines; every module receives the Logger through the container rather
 * than importing a global, and tests pass their own `write` to read what was logged.
 */
import pino from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const log = pino(
    {
      level,
      base: null,
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write },
  );
  return {
    debug: (m, f) => log.debug(f ?? {}, m),
    info: (m, f) => log.info(f ?? {}, m),
    warn: (m, f) => log.warn(f ?? {}, m),
    error: (m, f) => log.error(f ?? {}, m),
  };
}
