import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { nextRun, type Cadence } from './next-run.js';

/** Every run of `cadence` in [from, to). */
function runsBetween(cadence: Cadence, from: string, to: string): Date[] {
  const runs: Date[] = [];
  let at = new Date(new Date(from).getTime() - 1);
  const end = new Date(to).getTime();
  for (;;) {
    const next = nextRun(cadence, at);
    if (!next || next.getTime() >= end) return runs;
    runs.push(next);
    at = next;
  }
}

const local = (at: Date, zone: string) => DateTime.fromJSDate(at, { zone }).toFormat("yyyy-MM-dd HH:mm ZZ");

describe('next run of a schedule', () => {
  it('runs a daily 02:30 in Berlin once a day through March, and at 03:30 on the night the clocks skip 02:30', () => {
    const cadence = { everyMinutes: 0, minuteOfDay: 150, weekdays: 0x7f, timezone: 'Europe/Berlin' };
    const runs = runsBetween(cadence, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z');
    expect(runs).toHaveLength(31);
    expect(runs.slice(26, 30).map((r) => local(r, 'Europe/Berlin'))).toEqual([
      '2026-03-27 02:30 +01:00',
      '2026-03-28 02:30 +01:00',
      '2026-03-29 03:30 +02:00', // 02:00 → 03:00: 02:30 does not exist that night
      '2026-03-30 02:30 +02:00',
    ]);
    // In UTC the run moves an hour earlier after the change, as the wall clock stays.
    expect(runs[0]!.toISOString()).toBe('2026-03-01T01:30:00.000Z');
    expect(runs[30]!.toISOString()).toBe('2026-03-31T00:30:00.000Z');
  });

  it('runs a repeated wall time once, the first time the clock shows it (New York, 1 November 2026)', () => {
    const cadence = { everyMinutes: 0, minuteOfDay: 90, weekdays: 0x7f, timezone: 'America/New_York' };
    const runs = runsBetween(cadence, '2026-10-30T00:00:00Z', '2026-11-03T00:00:00Z');
    expect(runs.map((r) => r.toISOString())).toEqual([
      '2026-10-30T05:30:00.000Z',
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z', // 01:30 EDT, not 01:30 EST an hour later
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('repeats every hour at the same wall-clock times: 23 runs the day the clocks go forward, 24 the day they go back', () => {
    const cadence = { everyMinutes: 60, minuteOfDay: 0, weekdays: 0x7f, timezone: 'Europe/Berlin' };
    const spring = runsBetween(cadence, '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z');
    expect(spring).toHaveLength(23);
    const autumn = runsBetween(cadence, '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z');
    expect(autumn).toHaveLength(24);
    expect(new Set(autumn.map((r) => r.getTime())).size).toBe(24);
    for (const runs of [spring, autumn]) {
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.getTime()).toBeGreaterThan(runs[i - 1]!.getTime());
    }
  });

  it('keeps to the weekdays of the mask (bit 0 Sunday) and a schedule of one weekday runs a week later', () => {
    const saturdays = { everyMinutes: 0, minuteOfDay: 0, weekdays: 1 << 6, timezone: 'UTC' };
    const runs = runsBetween(saturdays, '2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z');
    expect(runs.map((r) => r.getUTCDate())).toEqual([6, 13, 20, 27]);
    expect(nextRun(saturdays, new Date('2026-06-06T00:00:00Z'))!.toISOString()).toBe('2026-06-13T00:00:00.000Z');
    const weekdays = { everyMinutes: 720, minuteOfDay: 0, weekdays: 0b0111110, timezone: 'Asia/Shanghai' };
    const week = runsBetween(weekdays, '2026-06-07T00:00:00+08:00', '2026-06-14T00:00:00+08:00');
    expect(week.map((r) => local(r, 'Asia/Shanghai'))).toEqual(
      ['08', '09', '10', '11', '12'].flatMap((d) => [`2026-06-${d} 00:00 +08:00`, `2026-06-${d} 12:00 +08:00`]),
    );
    expect(nextRun({ ...saturdays, weekdays: 0 }, new Date())).toBeUndefined();
  });
});
