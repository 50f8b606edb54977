import { DomainError } from '../../lib/errors.js';
import type { SCHEDULE_ACTIONS } from '../../db/schema/schedules.js';
import { normaliseCommand } from '../console/index.js';
import { isIanaZone } from './next-run.js';
import type { ScheduleInput } from './schema.js';

/** The original's limits on a schedule. */
export const MAX_SCHEDULES_PER_SERVER = 20;
const MAX_LABEL_CHARS = 64;
/** Intervals that divide a day, so the runs sit at the same clock times every day. */
export const EVERY_MINUTES = [15, 30, 60, 120, 180, 240, 360, 480, 720] as const;
/** The shortest interval of an action that takes the server down (a command may run every 15). */
const MIN_POWER_EVERY_MINUTES = 60;
/** Lead times of the in-game warning. */
export const WARN_MINUTES = [0, 1, 5, 10, 15, 30] as const;

export type ScheduleAction = (typeof SCHEDULE_ACTIONS)[number];

export interface ScheduleSettings {
  label: string;
  action: ScheduleAction;
  command: string;
  everyMinutes: number;
  minuteOfDay: number;
  weekdays: number;
  timezone: string;
  warnMinutes: number;
  enabled: boolean;
}

const bad = (message: string) => new DomainError('bad_schedule', message);
const ACTIONS: readonly string[] = ['command', 'restart', 'stop', 'start', 'backup'];

/**
 * What a schedule's body means, checked as the original checks it (400 bad_schedule, and a
 * command's own problems as the console answers them: 400 bad_request).
 */
export function scheduleSettings(input: ScheduleInput): ScheduleSettings {
  const label = (input.label ?? '').trim();
  if ([...label].length > MAX_LABEL_CHARS) throw bad(`label too long (max ${MAX_LABEL_CHARS} characters)`);
  if (/[\u0000-\u001f\u007f]/.test(label)) throw bad('label must be a single line');

  const action = input.action ?? '';
  if (!ACTIONS.includes(action)) throw bad('action must be one of command, restart, stop, start, backup');
  let command = '';
  if (action === 'command') {
    // The console's checks, with the one leading slash players type ("/say hi").
    const checked = normaliseCommand(input.command ?? '');
    if ('problem' in checked) throw new DomainError('bad_request', checked.problem);
    command = checked.command;
  } else if ((input.command ?? '').trim() !== '') {
    throw bad('only a command schedule takes a command');
  }

  const everyMinutes = input.every_minutes ?? 0;
  const minuteOfDay = input.minute_of_day ?? 0;
  if (everyMinutes === 0) {
    if (minuteOfDay < 0 || minuteOfDay > 24 * 60 - 1) throw bad('minute_of_day must be between 0 and 1439');
  } else if (!(EVERY_MINUTES as readonly number[]).includes(everyMinutes)) {
    throw bad(`every_minutes must be 0 or one of ${EVERY_MINUTES.join(', ')}`);
  } else if (everyMinutes < MIN_POWER_EVERY_MINUTES && action !== 'command') {
    throw bad(`a ${action} can repeat at most every ${MIN_POWER_EVERY_MINUTES} minutes`);
  } else if (minuteOfDay !== 0) {
    throw bad('a repeating schedule has no minute_of_day');
  }
  const weekdays = input.weekdays ?? 0;
  if (weekdays < 1 || weekdays > 0x7f) throw bad('weekdays must name at least one day (bits 0 to 6, Sunday first)');

  const timezone = (input.timezone ?? '').trim();
  if (!isIanaZone(timezone)) throw bad(timezone === '' ? 'timezone must be an IANA zone name such as Asia/Shanghai' : `unknown timezone "${timezone}"`);

  const warnMinutes = input.warn_minutes ?? 0;
  if (!(WARN_MINUTES as readonly number[]).includes(warnMinutes)) throw bad(`warn_minutes must be one of ${WARN_MINUTES.join(', ')}`);
  // A restart, stop or backup repeats at most hourly, so its warning (30 minutes at most) always
  // comes after the run before it.
  if (warnMinutes > 0 && (action === 'command' || action === 'start')) throw bad('only a restart, stop or backup warns the players');

  return { label, action: action as ScheduleAction, command, everyMinutes, minuteOfDay, weekdays, timezone, warnMinutes, enabled: input.enabled ?? true };
}

/** The in-game line announcing a run `minutes` ahead. Made of our words and a number only. */
export function warningLine(action: ScheduleAction, minutes: number): string {
  switch (action) {
    case 'restart':
      return `[Felis] Server restarts in ${minutes} min`;
    case 'stop':
      return `[Felis] Server stops in ${minutes} min`;
    default:
      return `[Felis] Server pauses for a backup in ${minutes} min and comes back after`;
  }
}
