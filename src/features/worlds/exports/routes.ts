import { Readable } from 'node:stream';
import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json } from '../../../http/route.js';
import { ServerNameParam, type ServersParts } from '../../servers/index.js';
import { BackupOfServer, DownloadQuery, StateSchema, TicketParam, TicketSchema } from './schema.js';
import { exportBackup, exportStateOf, exportWorld, openExport, ownExport, type ExportRow } from './service.js';
import type { WorldsParts } from '../volumes/index.js';
import type { AppDeps } from '../../../http/env.js';

const exportErrors = {
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('no such server, no_backup, or nothing at the path'),
  409: errorAnswer('not_stopped, maintenance_in_progress or backup_corrupt'),
  503: errorAnswer('the world volumes or the backup store cannot be reached'),
};

const backupExport = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/backups/{id}/export',
  summary: 'Make a backup downloadable (by the caller only)',
  request: { params: BackupOfServer },
  responses: { 202: json(TicketSchema, 'the export ticket'), ...exportErrors },
});
const worldExport = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/world/export',
  summary: 'Archive a stopped world for download (by the caller only)',
  request: { params: ServerNameParam },
  responses: { 202: json(TicketSchema, 'the export ticket'), ...exportErrors },
});
const fileDownload = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/files/download',
  summary: 'Prepare a file or folder of a stopped world for download',
  request: { params: ServerNameParam, query: DownloadQuery },
  responses: { 202: json(TicketSchema, 'the export ticket'), 400: errorAnswer('bad_request or bad_path'), ...exportErrors },
});
const exportState = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/exports/{ticket}',
  summary: 'Where an export stands',
  request: { params: TicketParam },
  responses: {
    200: json(StateSchema, 'its state'),
    404: errorAnswer('no such export of yours'),
    410: errorAnswer('export_expired: downloaded already, or its time ran out'),
  },
});
const exportDownload = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/exports/{ticket}/download',
    summary: 'Download an export (only the user who asked)',
    request: { params: TicketParam },
    responses: {
      200: { description: 'the archive or file', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } },
      404: errorAnswer('no such export of yours'),
      409: errorAnswer('not ready yet'),
      410: errorAnswer('export_expired: downloaded already (a ticket is good for one download), or its time ran out'),
      503: errorAnswer('the backup store cannot be reached'),
    },
  },
  { streamed: true },
);

const ticketOf = (row: ExportRow) => ({ ticket: row.ticket, state: exportStateOf(row), filename: row.filename });

/** Exports and downloads of the external face. */
export function externalExportRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return createRouter()
    .openapi(backupExport, async (c) => {
      const { name, id } = c.req.valid('param');
      return c.json(ticketOf(await exportBackup(deps, { serverName: name, backupId: id, caller: c.var.session })), 202);
    })
    .openapi(worldExport, async (c) => {
      const { name } = c.req.valid('param');
      return c.json(ticketOf(await exportWorld(deps, { serverName: name, caller: c.var.session, need: 'backups.write' })), 202);
    })
    .openapi(fileDownload, async (c) => {
      const { name } = c.req.valid('param');
      return c.json(ticketOf(await exportWorld(deps, { serverName: name, caller: c.var.session, path: c.req.valid('query').path, need: 'files.read' })), 202);
    })
    .openapi(exportState, async (c) => {
      const row = await ownExport(deps, c.req.valid('param').ticket, c.var.session.userId);
      return c.json({ state: exportStateOf(row), ...(row.message ? { message: row.message } : {}) }, 200);
    })
    .openapi(exportDownload, async (c) => {
      const { row, body } = await openExport(deps, c.req.valid('param').ticket, c.var.session.userId);
      const filename = row.filename.replace(/[^A-Za-z0-9._-]/g, '_');
      return c.body(Readable.toWeb(body) as ReadableStream<Uint8Array>, 200, {
        'Content-Type': row.contentType,
        'Content-Disposition': `attachment; filename="${filename}"`,
      });
    });
}
