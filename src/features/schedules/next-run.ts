import { DateTime, IANAZone } from 'luxon';

/**
 * When a schedule runs, in its own time zone (luxon reads the IANA database, daylight-saving
 * changes included). A schedule runs on the weekdays of its bit mask (bit 0 Sunday … bit 6
 * Saturday) at `minute_of_day`, or, with `every_minutes`, at every multiple of it since local
 * midnight. The times are wall-clock times:
 * - a time the zone skips when the clocks go forward runs at the same wall time after the jump
 *   (02:30 becomes 03:30 when 02:00 jumps to 03:00), once;
 * - a time the zone shows twice when the clocks go back runs once, the first time it shows.
 */

export interface Cadence {
  everyMinutes: number;
  minuteOfDay: number;
  weekdays: number;
  timezone: string;
}

export const isIanaZone = (zone: string): boolean => zone !== '' && zone.toLowerCase() !== 'local' && IANAZone.isValidZone(zone);

/** The wall time `minute` of the day `day` in its zone; the first occurrence of a repeated one. */
function wallTime(day: DateTime, minute: number): DateTime {
  const hour = Math.floor(minute / 60);
  const min = minute % 60;
  const at = day.set({ hour, minute: min, second: 0, millisecond: 0 });
  // luxon reads a repeated wall time with the later offset; an earlier instant showing the same
  // wall time (the shifts are 30, 60 or 120 minutes) is its first occurrence.
  for (const back of [30, 60, 120]) {
    const earlier = at.minus({ minutes: back });
    if (earlier.hour === hour && earlier.minute === min && earlier.day === at.day) return earlier;
  }
  return at;
}

/** The first run strictly after `after`, or undefined for a schedule that names no weekday. */
export function nextRun(cadence: Cadence, after: Date): Date | undefined {
  const zone = isIanaZone(cadence.timezone) ? cadence.timezone : 'utc'; // validated when saved
  const start = DateTime.fromJSDate(after, { zone }).startOf('day');
  const minutes: number[] = [];
  if (cadence.everyMinutes > 0) for (let m = 0; m < 24 * 60; m += cadence.everyMinutes) minutes.push(m);
  else minutes.push(cadence.minuteOfDay);
  // Eight days: today's runs may all be past, and a schedule of one weekday runs a week from today.
  for (let d = 0; d <= 8; d++) {
    const day = start.plus({ days: d });
    if ((cadence.weekdays & (1 << day.weekday % 7)) === 0) continue;
    for (const minute of minutes) {
      const at = wallTime(day, minute);
      if (at.toMillis() > after.getTime()) return at.toJSDate();
    }
  }
  return undefined;
}
