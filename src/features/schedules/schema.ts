import { z } from '@hono/zod-openapi';
import { RUN_RESULTS, RUN_STATES, SCHEDULE_ACTIONS } from '../../db/schema/schedules.js';
import { refusedAs } from '../../http/coded-refusal.js';
import { ServerNameParam } from '../servers/index.js';

/**
 * The body of POST /servers/{name}/schedules and PUT …/schedules/{id}, as the original panel sends
 * it. Types are checked here (400 bad_request, unknown fields refused); what the values mean is
 * checked by the service (400 bad_schedule), where the original checks it.
 */
export const ScheduleInput = z
  .strictObject({
    label: z.string().max(1024).optional(),
    action: z.string().max(32).optional(),
    command: z.string().max(4096).optional(),
    every_minutes: z.number().int().optional(),
    minute_of_day: z.number().int().optional(),
    weekdays: z.number().int().optional(),
    timezone: z.string().max(128).optional(),
    warn_minutes: z.number().int().optional(),
    /** Defaults to true. */
    enabled: z.boolean().optional(),
  })
  .openapi('ScheduleInput');
export type ScheduleInput = z.infer<typeof ScheduleInput>;

const at = z.string().nullable();

export const ScheduleSchema = z
  .object({
    id: z.number().int(),
    server: z.string(),
    label: z.string(),
    action: z.enum(SCHEDULE_ACTIONS),
    command: z.string(),
    every_minutes: z.number().int(),
    minute_of_day: z.number().int(),
    weekdays: z.number().int(),
    timezone: z.string(),
    warn_minutes: z.number().int(),
    enabled: z.boolean(),
    /** Null while the schedule is disabled. */
    next_run_at: at,
    /** The step of a run in progress; empty when none is. */
    run_state: z.union([z.enum(RUN_STATES), z.literal('')]),
    last_run_at: at,
    /** How the last run ended; empty before the first, and while a run is in progress. */
    last_result: z.union([z.enum(RUN_RESULTS), z.literal('')]),
    last_detail: z.string(),
    created_by: z.string(),
    created_at: z.string(),
  })
  .openapi('Schedule');
export type ScheduleView = z.infer<typeof ScheduleSchema>;

export const ScheduleListSchema = z
  .object({ server: z.string(), schedules: z.array(ScheduleSchema), limit: z.number().int() })
  .openapi('ScheduleList');

export const ScheduleParams = ServerNameParam.extend({
  id: z
    .string()
    .refine((id) => /^[1-9][0-9]{0,14}$/.test(id), refusedAs('bad_id', 'invalid schedule id'))
    .openapi({ param: { name: 'id', in: 'path' }, example: '1' }),
});
export { ServerNameParam };
