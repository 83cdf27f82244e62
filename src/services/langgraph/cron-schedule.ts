/**
 * Five-field cron schedules for LangGraph crons (docs/langgraph.md): parse `minute hour day-of-month month
 * day-of-week` (lists, ranges, steps, month and weekday names, `@hourly`-style macros) and find the next firing
 * after an instant, in UTC or an IANA timezone. Written here rather than taken from a package: small, bounded (input
 * length, a search horizon of five years) and without I/O.
 */
import { BadRequestError } from '../../domain/errors';

export interface CronSchedule {
  minutes: Set<number>;
  hours: Set<number>;
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Day-of-month and day-of-week both restricted: a day matching either fires (Vixie cron's rule). */
  eitherDay: boolean;
  dayRestricted: boolean;
  weekdayRestricted: boolean;
}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MAX_SCHEDULE_LENGTH = 200;
/** The furthest a next firing is looked for (a schedule like `0 0 30 2 *` never fires). */
const HORIZON_MS = 5 * 366 * 24 * 3600_000;

function invalid(why: string): BadRequestError {
  return new BadRequestError(`schedule is not a 5-field cron expression: ${why}.`, 'invalid_schedule', 'schedule');
}

function parseField(text: string, name: string, min: number, max: number, names: string[] = []): Set<number> {
  const out = new Set<number>();
  const value = (raw: string): number => {
    const named = names.indexOf(raw.toLowerCase());
    if (named >= 0) return named + (names === MONTH_NAMES ? 1 : 0);
    if (!/^\d{1,2}$/.test(raw)) throw invalid(`${name} has '${raw.slice(0, 20)}'`);
    const n = Number(raw);
    if (n < min || n > max) throw invalid(`${name} ${n} is outside ${min}-${max}`);
    return n;
  };
  for (const part of text.split(',')) {
    const [range = '', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || step > max + 1) throw invalid(`${name} has a bad step '${part}'`);
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [min, max];
    else if (range.includes('-')) {
      const [a = '', b = ''] = range.split('-');
      [from, to] = [value(a), value(b)];
      if (from > to) throw invalid(`${name} range ${range} runs backwards`);
    } else {
      from = value(range);
      to = stepText === undefined ? from : max;
    }
    for (let n = from; n <= to; n += step) out.add(n);
  }
  return out;
}

export function parseCronSchedule(schedule: string): CronSchedule {
  const trimmed = schedule.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_SCHEDULE_LENGTH) throw invalid('empty or too long');
  const expanded = MACROS[trimmed.toLowerCase()] ?? trimmed;
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) throw invalid(`${fields.length} fields`);
  const [m = '', h = '', dom = '', mon = '', dow = ''] = fields;
  const weekdays = parseField(dow, 'day-of-week', 0, 7, DAY_NAMES);
  if (weekdays.delete(7)) weekdays.add(0);
  const dayRestricted = !dom.startsWith('*');
  const weekdayRestricted = !dow.startsWith('*');
  return {
    minutes: parseField(m, 'minute', 0, 59),
    hours: parseField(h, 'hour', 0, 23),
    days: parseField(dom, 'day-of-month', 1, 31),
    months: parseField(mon, 'month', 1, 12, MONTH_NAMES),
    weekdays,
    eitherDay: dayRestricted && weekdayRestricted,
    dayRestricted,
    weekdayRestricted,
  };
}

/** An instant's wall-clock fields in `timeZone` (UTC when null). */
type Wall = { year: number; month: number; day: number; hour: number; minute: number; weekday: number };

const formatters = new Map<string, Intl.DateTimeFormat>();
function wallOf(at: Date, timeZone: string | null): Wall {
  if (!timeZone || timeZone === 'UTC') {
    return {
      year: at.getUTCFullYear(),
      month: at.getUTCMonth() + 1,
      day: at.getUTCDate(),
      hour: at.getUTCHours(),
      minute: at.getUTCMinutes(),
      weekday: at.getUTCDay(),
    };
  }
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    if (formatters.size > 100) formatters.clear();
    formatters.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    weekday: DAY_NAMES.indexOf(String(parts.weekday).slice(0, 3).toLowerCase()),
  };
}

/** @throws BadRequestError when `timeZone` is not an IANA timezone this runtime knows. */
export function checkTimeZone(timeZone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new BadRequestError(`timezone '${timeZone.slice(0, 60)}' is not a known IANA timezone.`, null, 'timezone');
  }
  return timeZone;
}

function dayMatches(s: CronSchedule, w: Wall): boolean {
  const byDay = s.days.has(w.day);
  const byWeekday = s.weekdays.has(w.weekday);
  if (s.eitherDay) return byDay || byWeekday;
  return (!s.dayRestricted || byDay) && (!s.weekdayRestricted || byWeekday);
}

/**
 * The first whole minute strictly after `after` whose wall-clock time in `timeZone` matches, or null within five
 * years. Steps skip whole days and hours that cannot match, so a search is a few thousand steps at most. Around a
 * daylight-saving change a wall time that does not exist is skipped and one that happens twice fires twice.
 */
export function nextFiring(schedule: CronSchedule, after: Date, timeZone: string | null = null): Date | null {
  let t = Math.floor(after.getTime() / 60_000) * 60_000 + 60_000;
  const end = after.getTime() + HORIZON_MS;
  while (t <= end) {
    const w = wallOf(new Date(t), timeZone);
    if (!schedule.months.has(w.month) || !dayMatches(schedule, w)) {
      t += ((23 - w.hour) * 60 + (60 - w.minute)) * 60_000; // the next wall-clock midnight
      continue;
    }
    if (!schedule.hours.has(w.hour)) {
      t += (60 - w.minute) * 60_000; // the next wall-clock hour
      continue;
    }
    if (!schedule.minutes.has(w.minute)) {
      t += 60_000;
      continue;
    }
    return new Date(t);
  }
  return null;
}
