import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { MAX_SCHEDULES_PER_SERVER } from './rules.js';
import { ScheduleInput, ScheduleListSchema, ScheduleParams, ScheduleSchema, ServerNameParam } from './schema.js';
import { createSchedule, deleteSchedule, listSchedules, runScheduleNow, updateSchedule } from './service.js';
import { toScheduleView } from './views.js';
import type { WorldsParts } from '../worlds/index.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';
import type { FleetParts } from '../fleet/index.js';

const gate = {
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('no such server, or no such schedule'),
};
const badInput = errorAnswer('bad_schedule (what the values mean), bad_request (a body of the wrong shape, or a command the console refuses), bad_id');

const list = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/servers/{name}/schedules',
  summary: 'A server’s scheduled tasks, oldest first (owner or staff)',
  request: { params: ServerNameParam },
  responses: { 200: json(ScheduleListSchema, 'the schedules and the per-server limit'), ...gate },
});

const create = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/schedules',
  summary: 'Add a scheduled task: a command, restart, stop, start or backup at set times in a time zone',
  request: { params: ServerNameParam, ...jsonBody(ScheduleInput) },
  responses: { 201: json(ScheduleSchema, 'created'), 400: badInput, ...gate, 409: errorAnswer(`schedule_limit: at most ${MAX_SCHEDULES_PER_SERVER} a server`) },
});

const update = defineRoute({ tier: 'app' }, {
  method: 'put',
  path: '/api/v1/servers/{name}/schedules/{id}',
  summary: 'Change a scheduled task (it passes to the server’s current owner)',
  request: { params: ScheduleParams, ...jsonBody(ScheduleInput) },
  responses: { 200: json(ScheduleSchema, 'changed'), 400: badInput, ...gate, 409: errorAnswer('schedule_running: a run is in progress') },
});

const remove = defineRoute({ tier: 'app' }, {
  method: 'delete',
  path: '/api/v1/servers/{name}/schedules/{id}',
  summary: 'Remove a scheduled task',
  request: { params: ScheduleParams },
  responses: { 204: { description: 'removed' }, 400: errorAnswer('bad_id'), ...gate, 409: errorAnswer('schedule_running: a run is in progress') },
});

const run = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/schedules/{id}/run',
  summary: 'Run a scheduled task now, without the warning; its next run stays where it is',
  request: { params: ScheduleParams },
  responses: {
    202: json(ScheduleSchema, 'the schedule after the run’s first step (a restart or backup goes on)'),
    400: errorAnswer('bad_id'),
    ...gate,
    409: errorAnswer('schedule_running (a run is in progress) or schedule_stale (the server has a new owner; save it again)'),
  },
});

/** The schedule routes of the external face (owner or staff). */
export function scheduleRoutes(deps: AppDeps & WorldsParts & ServersParts & FleetParts) {
  return createRouter()
    .openapi(list, async (c) => {
      const { name } = c.req.valid('param');
      const rows = await listSchedules(deps, name, c.var.session);
      return c.json({ server: name, schedules: rows.map(toScheduleView), limit: MAX_SCHEDULES_PER_SERVER }, 200);
    })
    .openapi(create, async (c) => {
      const { name } = c.req.valid('param');
      const row = await createSchedule(deps, name, c.req.valid('json'), { session: c.var.session, requestId: c.var.requestId });
      return c.json(toScheduleView(row), 201);
    })
    .openapi(update, async (c) => {
      const { name, id } = c.req.valid('param');
      const row = await updateSchedule(deps, name, Number(id), c.req.valid('json'), { session: c.var.session, requestId: c.var.requestId });
      return c.json(toScheduleView(row), 200);
    })
    .openapi(remove, async (c) => {
      const { name, id } = c.req.valid('param');
      await deleteSchedule(deps, name, Number(id), { session: c.var.session, requestId: c.var.requestId });
      return c.body(null, 204);
    })
    .openapi(run, async (c) => {
      const { name, id } = c.req.valid('param');
      const row = await runScheduleNow(deps, name, Number(id), { session: c.var.session, requestId: c.var.requestId });
      return c.json(toScheduleView(row), 202);
    });
}
