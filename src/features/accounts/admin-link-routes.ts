import { z } from '@hono/zod-openapi';
import { and, eq } from 'drizzle-orm';
import { linkedAccounts } from '../../db/schema/accounts.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { liveUserOr404 } from './admin-service.js';
import { writeAudit } from '../audit/index.js';
import { McUuidSchema, UserIdParam } from './schema.js';
import { uniqueViolation } from './users-service.js';

const admin = { tier: 'admin' } as const;
const AuthSource = z.enum(['primary', 'thirdparty']);

const link = defineRoute(admin, {
  method: 'post',
  path: '/api/v1/users/{id}/links',
  summary: 'Link a game identity to an account by hand (owner only)',
  request: { params: UserIdParam, ...jsonBody(z.strictObject({ mc_uuid: McUuidSchema, auth_source: AuthSource })) },
  responses: {
    200: json(z.object({ ok: z.literal(true), mc_uuid: z.string(), auth_source: AuthSource }), 'linked'),
    403: errorAnswer('forbidden: only an owner links identities'),
    404: errorAnswer('no such user'),
    409: errorAnswer('conflict: the identity is linked to an account already'),
  },
});

const unlink = defineRoute(admin, {
  method: 'delete',
  path: '/api/v1/users/{id}/links/{mc_uuid}',
  summary: 'Unlink a game identity from an account (owner only)',
  request: { params: UserIdParam.extend({ mc_uuid: McUuidSchema.openapi({ param: { name: 'mc_uuid', in: 'path' } }) }) },
  responses: {
    200: json(z.object({ ok: z.literal(true), mc_uuid: z.string() }), 'unlinked'),
    403: errorAnswer('forbidden: only an owner unlinks identities'),
    404: errorAnswer('no such user, or the identity is not linked to it'),
  },
});

/** Linking moves a way into the game's side of an account: the owner's decision alone. */
function requireOwner(actor: SessionContext): void {
  if (actor.role !== 'owner') throw new DomainError('forbidden', 'Only an owner links or unlinks game identities.');
}

/** Game identities of an account, by hand. External face, admin tier, owner only. */
export function adminLinkRoutes() {
  return createRouter()
    .openapi(link, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      requireOwner(actor);
      const { id } = c.req.valid('param');
      const { mc_uuid, auth_source } = c.req.valid('json');
      const now = deps.clock.now();
      try {
        await deps.database.db.transaction(async (tx) => {
          await liveUserOr404(tx, id);
          await tx.insert(linkedAccounts).values({ mcUuid: mc_uuid, userId: id, authSource: auth_source, verifiedAt: now });
          await writeAudit(tx, { at: now, actor: actor.userId, action: 'link.add', target: id, detail: { mc_uuid, auth_source }, requestId: c.var.requestId });
        });
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw new DomainError('conflict', 'This game identity is linked to an account already.');
        throw err;
      }
      return c.json({ ok: true as const, mc_uuid, auth_source }, 200);
    })
    .openapi(unlink, async (c) => {
      const { deps } = c.var;
      const actor = c.var.session;
      requireOwner(actor);
      const { id, mc_uuid } = c.req.valid('param');
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        await liveUserOr404(tx, id);
        const removed = await tx
          .delete(linkedAccounts)
          .where(and(eq(linkedAccounts.mcUuid, mc_uuid), eq(linkedAccounts.userId, id)))
          .returning({ mcUuid: linkedAccounts.mcUuid });
        if (removed.length === 0) throw new DomainError('not_found', 'This game identity is not linked to that account.');
        await writeAudit(tx, { at: now, actor: actor.userId, action: 'link.remove', target: id, detail: { mc_uuid }, requestId: c.var.requestId });
      });
      return c.json({ ok: true as const, mc_uuid }, 200);
    });
}
