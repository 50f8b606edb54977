import { createRouter, defineRoute, errorAnswer, json } from '../../../http/route.js';
import { ServerNameParam, type ServersParts } from '../../servers/index.js';
import { ServerJobsSchema } from './schema.js';
import { listServerJobs } from './service.js';
import { toServerJob } from './views.js';
import type { AppDeps } from '../../../http/env.js';

const jobs = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/servers/{name}/jobs',
  summary: 'What runs or ran on a world, newest first',
  request: { params: ServerNameParam },
  responses: { 200: json(ServerJobsSchema, 'the jobs'), 403: errorAnswer('not the owner or staff'), 404: errorAnswer('no such server') },
});

/** The jobs of a world on the external face (owner or staff). */
export function externalJobRoutes(deps: AppDeps & ServersParts) {
  return createRouter().openapi(jobs, async (c) => {
    const { name } = c.req.valid('param');
    const rows = await listServerJobs(deps, name, c.var.session);
    return c.json({ server: name, jobs: rows.map(toServerJob) }, 200);
  });
}
