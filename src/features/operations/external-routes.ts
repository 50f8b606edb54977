import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { dbBackupStatus, updateReportView } from './records.js';
import { DbBackupStatusSchema, UpdateReportSchema, UpdateWindowSchema } from './schema.js';
import { currentWindow, setWindow } from './window.js';

const admin = { tier: 'admin' } as const;

const getWindow = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/updates/window',
  summary: 'The maintenance window for automatic updates',
  responses: { 200: json(UpdateWindowSchema, 'the window; both ends null when unset') },
});

const putWindow = defineRoute(admin, {
  method: 'put',
  path: '/api/v1/updates/window',
  summary: 'Set the maintenance window (start inclusive, end exclusive), or clear it with both ends null',
  request: jsonBody(UpdateWindowSchema),
  responses: {
    200: json(UpdateWindowSchema, 'the stored window'),
    400: errorAnswer('bad_request: exactly one end set, or the end not after the start'),
  },
});

const getReport = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/updates/report',
  summary: 'The newest update check, stale past 26 hours',
  responses: { 200: json(UpdateReportSchema, 'the report') },
});

const getDbBackup = defineRoute(admin, {
  method: 'get',
  path: '/api/v1/platform/db-backup',
  summary: 'The newest control-plane database backup, stale past 26 hours',
  responses: { 200: json(DbBackupStatusSchema, 'the status') },
});

/** The operator console's view of updates and database backups. */
export function externalOperationsRoutes() {
  return createRouter()
    .openapi(getWindow, async (c) => c.json(await currentWindow(c.var.deps.database.db), 200))
    .openapi(putWindow, async (c) => {
      const { deps, session } = c.var;
      return c.json(await setWindow(deps.database.db, c.req.valid('json'), session.userId, deps.clock.now()), 200);
    })
    .openapi(getReport, async (c) => c.json(await updateReportView(c.var.deps.database.db, c.var.deps.clock.now()), 200))
    .openapi(getDbBackup, async (c) => c.json(await dbBackupStatus(c.var.deps.database.db, c.var.deps.clock.now()), 200));
}
