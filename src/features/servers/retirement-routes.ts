import { z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import { writeAudit } from '../audit/index.js';
import { serverRetirements } from '../../db/schema/servers.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { requireServer } from './lookup.js';
import { retirementOf } from './retirement.js';
import { ServerNameParam } from './schema.js';
import { assertOwnerOrStaff } from './service.js';

const RetiringSchema = z
  .object({ name: z.string(), retiring: z.object({ requested_at: z.iso.datetime({ offset: true }), delete: z.boolean() }) })
  .openapi('Retirement');

const request = defineRoute({ tier: 'app' }, {
  method: 'put',
  path: '/api/v1/servers/{name}/retirement',
  summary: 'Retire a server: it is stopped, then released (or deleted with `delete`) by the background sweep',
  request: { params: ServerNameParam, ...jsonBody(z.strictObject({ confirm: z.literal(true), delete: z.boolean() })) },
  responses: { 200: json(RetiringSchema, 'retiring'), 403: errorAnswer('not the owner'), 404: errorAnswer('no such server') },
});

const cancel = defineRoute({ tier: 'app' }, {
  method: 'delete',
  path: '/api/v1/servers/{name}/retirement',
  summary: 'Call off a retirement the sweep has not carried out yet',
  request: { params: ServerNameParam },
  responses: { 204: { description: 'not retiring' }, 403: errorAnswer('not the owner'), 404: errorAnswer('no such server') },
});

/** Retirement of a server. External face, owner or staff. */
export function retirementRoutes() {
  return createRouter()
    .openapi(request, async (c) => {
      const { deps } = c.var;
      const { name } = c.req.valid('param');
      const body = c.req.valid('json');
      const session = c.var.session;
      await requireServer(deps, name);
      await assertOwnerOrStaff(deps, name, session, 'retire it');
      const now = deps.clock.now();
      const db = deps.database.db;
      await db.transaction(async (tx) => {
        await tx
          .insert(serverRetirements)
          .values({ serverName: name, requestedAt: now, requestedBy: session.userId, delete: body.delete })
          .onConflictDoUpdate({ target: serverRetirements.serverName, set: { delete: body.delete } });
        await writeAudit(tx, { at: now, actor: session.userId, action: 'server.retire', target: name, detail: { delete: body.delete }, requestId: c.var.requestId ?? null });
      });
      const row = (await retirementOf(db, name))!;
      return c.json({ name, retiring: { requested_at: row.requestedAt.toISOString(), delete: row.delete } }, 200);
    })
    .openapi(cancel, async (c) => {
      const { deps } = c.var;
      const { name } = c.req.valid('param');
      const session = c.var.session;
      await requireServer(deps, name);
      await assertOwnerOrStaff(deps, name, session, 'call off its retirement');
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        const removed = await tx.delete(serverRetirements).where(eq(serverRetirements.serverName, name)).returning({ n: serverRetirements.serverName });
        if (removed.length > 0) {
          await writeAudit(tx, { at: now, actor: session.userId, action: 'server.retire_cancel', target: name, detail: null, requestId: c.var.requestId ?? null });
        }
      });
      return c.body(null, 204);
    });
}
