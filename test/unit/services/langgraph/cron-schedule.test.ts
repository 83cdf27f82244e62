/**
 * The LangGraph crons' five-field schedules: what parses, what is refused with `invalid_schedule`, and the next
 * firing after an instant (steps, lists, names, macros, either-day rule, a timezone, never-matching schedules).
 */
import { nextFiring, parseCronSchedule } from '../../../../src/services/langgraph/cron-schedule';

const next = (schedule: string, after: string, tz: string | null = null): string | null =>
  nextFiring(parseCronSchedule(schedule), new Date(after), tz)?.toISOString() ?? null;

describe('cron schedules', () => {
  it('finds the next firing strictly after the instant', () => {
    expect(next('*/5 * * * *', '2026-01-01T00:00:00Z')).toBe('2026-01-01T00:05:00.000Z');
    expect(next('*/5 * * * *', '2026-01-01T00:04:59Z')).toBe('2026-01-01T00:05:00.000Z');
    expect(next('0 9 * * mon-fri', '2026-01-02T10:00:00Z')).toBe('2026-01-05T09:00:00.000Z'); // Fri -> Mon
    expect(next('30 2 1,15 * *', '2026-01-01T03:00:00Z')).toBe('2026-01-15T02:30:00.000Z');
    expect(next('0 0 1 jan *', '2026-03-01T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(next('@hourly', '2026-01-01T00:00:00Z')).toBe('2026-01-01T01:00:00.000Z');
    expect(next('0 0 * * 7', '2026-01-01T00:00:00Z')).toBe('2026-01-04T00:00:00.000Z'); // 7 is Sunday
    expect(next('5/20 * * * *', '2026-01-01T00:06:00Z')).toBe('2026-01-01T00:25:00.000Z');
  });

  it('fires on either day when both day fields are restricted, and on 29 February only in leap years', () => {
    // 2026-01-13 is a Tuesday; the 20th comes later: the Tuesday matches first.
    expect(next('0 0 20 * tue', '2026-01-12T12:00:00Z')).toBe('2026-01-13T00:00:00.000Z');
    expect(next('0 0 29 2 *', '2026-01-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
    expect(next('0 0 30 2 *', '2026-01-01T00:00:00Z')).toBeNull();
  });

  it('reads the schedule in a timezone', () => {
    // 09:00 in New York in January is 14:00 UTC.
    expect(next('0 9 * * *', '2026-01-05T00:00:00Z', 'America/New_York')).toBe('2026-01-05T14:00:00.000Z');
  });

  it.each(['* * * *', '60 * * * *', '* 24 * * *', '* * 0 * *', 'a b c d e', '5-1 * * * *', '*/0 * * * *', ''])(
    'refuses %p',
    (schedule) => {
      let code: unknown = null;
      try {
        parseCronSchedule(schedule);
      } catch (error) {
        code = (error as { code?: unknown }).code;
      }
      expect(code).toBe('invalid_schedule');
    },
  );
});
