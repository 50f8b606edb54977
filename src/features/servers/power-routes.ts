import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { emergencyStop, restartFromPanel } from './power.js';
import { DesiredStateResponse, ServerNameParam } from './core/index.js';
import type { ServersParts } from './core/index.js';
import type { AppDeps } from '../../http/env.js';

const restart = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/restart',
  summary: 'Restart a running server: a graceful stop, then a start within the wake rules (owner or staff)',
  request: { params: ServerNameParam },
  responses: {
    // The original's answer: the state the server is headed for once the restart is over.
    202: json(DesiredStateResponse('Running').openapi('RestartStarted'), 'the server is stopping, and starts again once down'),
    403: errorAnswer('not the owner or staff'),
    404: errorAnswer('no such server'),
    409: errorAnswer('not_running, maintenance_in_progress, retiring, or conflict (a restart is under way)'),
    503: errorAnswer('the cluster cannot be reached'),
  },
});

const EmergencyStopBody = z.strictObject({ confirm: z.string().max(253) }).openapi('EmergencyStopRequest');

const stopNow = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/emergency-stop',
  summary: 'End the server’s pod at once, without the clean save (owner or staff, with a fresh proof; confirm repeats the name)',
  request: { params: ServerNameParam, ...jsonBody(EmergencyStopBody) },
  responses: {
    202: json(DesiredStateResponse('Stopped').openapi('EmergencyStopResult'), 'stopped'),
    400: errorAnswer('bad_request: confirm is not the server’s name'),
    403: errorAnswer('not the owner or staff, or reauth_required'),
    404: errorAnswer('no such server'),
    503: errorAnswer('the cluster cannot be reached'),
  },
});

/** Restart and emergency stop of a server. External face, owner or staff. */
export function powerRoutes(deps: AppDeps & ServersParts) {
  return createRouter()
    .openapi(restart, async (c) => {
      const { name } = c.req.valid('param');
      await restartFromPanel(deps, name, c.var.session, c.var.requestId);
      return c.json({ name, desiredState: 'Running' as const }, 202);
    })
    .openapi(stopNow, async (c) => {
      const { name } = c.req.valid('param');
      await emergencyStop(deps, name, c.req.valid('json').confirm, c.var.session, c.var.requestId);
      return c.json({ name, desiredState: 'Stopped' as const }, 202);
    });
}
