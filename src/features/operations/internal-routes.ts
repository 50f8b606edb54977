import { createRouter, defineRoute, json, jsonBody } from '../../http/route.js';
import { recordDbBackup, recordUpdateReport } from './records.js';
import { DbBackupRecordSchema, UpdateReportRecordSchema, UpdaterWindowSchema } from './schema.js';
import { updaterWindow } from './window.js';

const ops = { tier: 'service', callers: ['ops'] } as const;

const windowRoute = defineRoute(ops, {
  method: 'get',
  path: '/api/v1/internal/updates/window',
  summary: "The maintenance window and whether now is inside it (the updater applies only then; outside it, it notifies)",
  responses: { 200: json(UpdaterWindowSchema, 'the window') },
});

const recordReport = defineRoute(ops, {
  method: 'post',
  path: '/api/v1/internal/updates/report',
  summary: 'Record an update check',
  request: jsonBody(UpdateReportRecordSchema),
  responses: { 204: { description: 'recorded' } },
});

const recordBackup = defineRoute(ops, {
  method: 'post',
  path: '/api/v1/internal/db-backups',
  summary: 'Record a control-plane database backup',
  request: jsonBody(DbBackupRecordSchema),
  responses: { 204: { description: 'recorded' } },
});

/** What the `ops` caller (the updater and the database backup job) reads and records. */
export function internalOperationsRoutes() {
  return createRouter()
    .openapi(windowRoute, async (c) => c.json(await updaterWindow(c.var.deps.database.db, c.var.deps.clock.now()), 200))
    .openapi(recordReport, async (c) => {
      await recordUpdateReport(c.var.deps.database.db, c.req.valid('json'), c.var.deps.clock.now());
      return c.body(null, 204);
    })
    .openapi(recordBackup, async (c) => {
      await recordDbBackup(c.var.deps.database.db, c.req.valid('json'), c.var.deps.clock.now());
      return c.body(null, 204);
    });
}
