import { createRouter, defineRoute, errorAnswer, json } from '../../../http/route.js';
import { CodedServerNameParam, ServerNameParam, type ServersParts } from '../../servers/index.js';
import {
  BackupDeletedSchema,
  BackupIdParam,
  BackupListQuery,
  BackupPageSchema,
  BackupStartedSchema,
  BreakGlassBody,
  RestoreBody,
  RestoreStartedSchema,
} from './schema.js';
import { backUpNow, breakGlassBackup, deleteBackup, listBackups, restoreBackup } from './service.js';
import { toBackupView } from './views.js';
import type { WorldsParts } from '../volumes/index.js';
import type { AppDeps } from '../../../http/env.js';

const worldErrors = {
  403: errorAnswer('not the owner or staff'),
  404: errorAnswer('no such server'),
  409: errorAnswer('not_stopped or maintenance_in_progress'),
  503: errorAnswer('the cluster, the world volumes or the backup store cannot be reached'),
};

const backupNow = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/backup',
  summary: 'Back up a stopped world now (reason manual)',
  request: { params: ServerNameParam },
  responses: { 202: json(BackupStartedSchema, 'the backup job started'), ...worldErrors },
});

const restore = defineRoute({ tier: 'app' }, {
  method: 'post',
  path: '/api/v1/servers/{name}/restore-backup',
  summary: 'Restore a backup into a stopped world (a pre_restore snapshot first)',
  request: { params: ServerNameParam, body: { required: false, content: { 'application/json': { schema: RestoreBody } } } },
  responses: {
    202: json(RestoreStartedSchema, 'the restore job started'),
    ...worldErrors,
    403: errorAnswer('not the owner or staff, or the backup is of a world with another owner'),
    404: errorAnswer('no such server, or no_backup'),
    409: errorAnswer('not_stopped, maintenance_in_progress or backup_corrupt'),
  },
});

const list = defineRoute({ tier: 'app' }, {
  method: 'get',
  path: '/api/v1/backups',
  summary: 'Backups, newest first (staff: all; a user: worlds they formerly owned)',
  request: { query: BackupListQuery },
  responses: { 200: json(BackupPageSchema, 'one page and the total') },
});

const remove = defineRoute({ tier: 'app' }, {
  method: 'delete',
  path: '/api/v1/backups/{id}',
  summary: 'Expire a backup and delete its archive',
  request: { params: BackupIdParam },
  responses: {
    200: json(BackupDeletedSchema, 'expired'),
    404: errorAnswer('no_backup'),
    409: errorAnswer('restore_in_progress'),
  },
});

/** Backups and restores of the external face (owner or staff). */
export function externalBackupRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return createRouter()
    .openapi(backupNow, async (c) => {
      const { name } = c.req.valid('param');
      await backUpNow(deps, name, c.var.session);
      return c.json({ name, status: 'backing_up' as const }, 202);
    })
    .openapi(restore, async (c) => {
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const safetySnapshot = body.safety_snapshot ?? true;
      const { backup } = await restoreBackup(deps, { serverName: name, caller: c.var.session, backupId: body.backup_id, safetySnapshot });
      return c.json({ name, status: 'restoring' as const, backup_id: backup.id, safety_snapshot: safetySnapshot }, 202);
    })
    .openapi(list, async (c) => {
      const page = await listBackups(deps, c.var.session, c.req.valid('query'));
      return c.json({ backups: page.rows.map(toBackupView), total: page.total }, 200);
    })
    .openapi(remove, async (c) => {
      const { id } = c.req.valid('param');
      await deleteBackup(deps, id, c.var.session);
      return c.json({ id, status: 'expired' as const }, 200);
    });
}

const breakGlass = defineRoute({ tier: 'service', callers: ['ops'] }, {
  method: 'post',
  path: '/api/v1/internal/servers/{name}/backup',
  summary: 'Break-glass backup of a stopped world, audited to the operator',
  request: { params: CodedServerNameParam, body: { required: false, content: { 'application/json': { schema: BreakGlassBody } } } },
  responses: {
    202: json(BackupStartedSchema, 'the backup job started'),
    400: errorAnswer('bad_request, or bad_name: a malformed server name, or os_user is not a login name'),
    404: errorAnswer('no such server'),
    409: errorAnswer('not_stopped or maintenance_in_progress'),
    503: errorAnswer('the cluster, the world volumes or the backup store cannot be reached'),
  },
});

/** The internal face's break-glass backup (ops). */
export function internalBackupRoutes(deps: AppDeps & WorldsParts & ServersParts) {
  return createRouter().openapi(breakGlass, async (c) => {
    const { name } = c.req.valid('param');
    await breakGlassBackup(deps, { serverName: name, osUser: c.req.valid('json').os_user?.trim() ?? '', requestId: c.var.requestId ?? null });
    return c.json({ name, status: 'backing_up' as const }, 202);
  });
}
