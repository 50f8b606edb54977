import type { ScheduleRow } from './engine.js';
import type { ScheduleView } from './schema.js';

/** A schedule as the original's panel reads it: times null when unset, run state and result empty when none. */
export function toScheduleView(row: ScheduleRow): ScheduleView {
  return {
    id: row.id,
    server: row.serverName,
    label: row.label,
    action: row.action,
    command: row.command,
    every_minutes: row.everyMinutes,
    minute_of_day: row.minuteOfDay,
    weekdays: row.weekdays,
    timezone: row.timezone,
    warn_minutes: row.warnMinutes,
    enabled: row.enabled,
    next_run_at: row.nextRunAt?.toISOString() ?? null,
    run_state: row.runState ?? '',
    last_run_at: row.lastRunAt?.toISOString() ?? null,
    last_result: row.lastResult ?? '',
    last_detail: row.lastDetail ?? '',
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}
