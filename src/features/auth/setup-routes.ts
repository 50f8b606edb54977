import { z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import type { Context } from 'hono';
import type { Transaction } from '../../db/client.js';
import { users } from '../../db/schema/accounts.js';
import type { AppEnv } from '../../http/env.js';
import { ApiError } from '../../http/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { writeAudit } from '../accounts/audit.js';
import { EmailSchema, UsernameSchema } from '../accounts/schema.js';
import { revokeUserSessions, startSession } from '../accounts/session-service.js';
import { findUserById, uniqueViolation } from '../accounts/users-service.js';
import { requireLocalAuth } from './guards.js';
import { doorLimit } from './rate-limit.js';
import { limited } from './schema.js';
import { SetupStateSchema, setupState } from './setup-state.js';
import { ownerExists, spendSetupToken } from './setup-token.js';

/** The owner's username when the redeem names none (api-extensions). */
export const DEFAULT_OWNER_USERNAME = 'owner';

const redeem = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/setup/redeem',
    summary:
      'Spend an owner token: a first-run token creates the owner, a recovery token (npm run recover-owner) signs in as its owner; either way a session in setup lockdown',
    middleware: [doorLimit('setup')],
    request: jsonBody(
      z.strictObject({ token: z.string().min(1).max(256), username: UsernameSchema.optional(), email: EmailSchema.optional() }),
    ),
    responses: {
      200: json(SetupStateSchema, 'owner created; session cookie set'),
      400: errorAnswer('setup_token_invalid (unknown, spent or expired; the same for each), or bad_request (a recovery token takes no username or email)'),
      403: errorAnswer('local_auth_disabled'),
      409: errorAnswer('conflict: the username or e-mail is taken'),
      ...limited,
    },
  },
);

const status = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'get',
    path: '/api/v1/auth/setup/status',
    summary: 'What first-run setup remains for the signed-in account',
    responses: { 200: json(SetupStateSchema, 'the setup state') },
  },
);

const ownerStatus = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/api/v1/auth/owner-status',
    summary: 'Whether the installation has an owner yet',
    responses: { 200: json(z.object({ owner_bound: z.boolean() }), 'owner bound or not') },
  },
);

const invalidToken = () => new ApiError('setup_token_invalid', 'This setup token is invalid, expired or already used.');

/**
 * A recovery token (owner-recovery.ts): the same owner account, signed in anew. Its other
 * sessions end and it is in setup lockdown until it has a new way in; nothing else changes.
 */
async function recoverOwner(c: Context<AppEnv>, tx: Transaction, ownerId: string, body: { username?: string; email?: string }, now: Date) {
  if (body.username !== undefined || body.email !== undefined) {
    // Thrown inside the transaction, so the token stays unspent for a corrected request.
    throw new ApiError('bad_request', 'A recovery token signs in as the existing owner: send only the token, then set the e-mail address.');
  }
  const owner = await findUserById(tx, ownerId);
  // Demoted, deleted or disabled since the token was minted: the token is for nobody now.
  if (!owner || owner.role !== 'owner' || owner.deletedAt !== null || owner.disabled) throw invalidToken();
  const [recovered] = await tx.update(users).set({ inSetup: true, updatedAt: now }).where(eq(users.id, ownerId)).returning();
  const revoked = await revokeUserSessions(tx, ownerId, now);
  await writeAudit(tx, { at: now, actor: ownerId, action: 'setup.recover', target: ownerId, detail: { sessions_revoked: revoked }, requestId: c.var.requestId });
  await startSession(c, tx, ownerId, 'setup_token');
  return recovered!;
}

/** First-run setup: the token door, the setup state, whether an owner exists. External face. */
export function setupRoutes() {
  return createRouter()
    .openapi(redeem, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const body = c.req.valid('json');
      const now = deps.clock.now();
      try {
        const owner = await deps.database.db.transaction(async (tx) => {
          const spent = await spendSetupToken(tx, body.token.trim(), now);
          if (!spent) throw invalidToken();
          if (spent.ownerId !== null) return recoverOwner(c, tx, spent.ownerId, body, now);
          // A token outliving the first owner (minted before a racing redeem) is as spent as any.
          if (await ownerExists(tx)) throw invalidToken();
          const [created] = await tx
            .insert(users)
            .values({
              username: body.username ?? DEFAULT_OWNER_USERNAME,
              email: body.email?.toLowerCase() ?? null,
              role: 'owner',
              inSetup: true,
              createdAt: now,
              updatedAt: now,
            })
            .returning();
          await writeAudit(tx, { at: now, actor: created!.id, action: 'setup.redeem', target: created!.id, requestId: c.var.requestId });
          await startSession(c, tx, created!.id, 'setup_token');
          return created!;
        });
        return c.json(await setupState(deps, deps.database.db, owner), 200);
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw new ApiError('conflict', 'That username or e-mail address is taken.');
        throw err;
      }
    })
    .openapi(status, async (c) => {
      const { deps } = c.var;
      const user = await findUserById(deps.database.db, c.var.session!.userId);
      if (!user) throw new ApiError('unauthorized');
      return c.json(await setupState(deps, deps.database.db, user), 200);
    })
    .openapi(ownerStatus, async (c) => c.json({ owner_bound: await ownerExists(c.var.deps.database.db) }, 200));
}
