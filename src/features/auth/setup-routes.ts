import { z } from '@hono/zod-openapi';
import { users } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { writeAudit } from '../audit/index.js';
import { EmailSchema, UsernameSchema } from '../accounts/schema.js';
import { startSession } from '../accounts/session-service.js';
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
    summary: 'First run: spend the setup token; creates the owner and a session in setup lockdown',
    middleware: [doorLimit('setup')],
    request: jsonBody(
      z.strictObject({ token: z.string().min(1).max(256), username: UsernameSchema.optional(), email: EmailSchema.optional() }),
    ),
    responses: {
      200: json(SetupStateSchema, 'owner created; session cookie set'),
      400: errorAnswer('setup_token_invalid (unknown, spent or expired; the same for each), or bad_request'),
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

const invalidToken = () => new DomainError('setup_token_invalid', 'This setup token is invalid, expired or already used.');

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
          if (!(await spendSetupToken(tx, body.token.trim(), now))) throw invalidToken();
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
        if (uniqueViolation(err) !== undefined) throw new DomainError('conflict', 'That username or e-mail address is taken.');
        throw err;
      }
    })
    .openapi(status, async (c) => {
      const { deps } = c.var;
      const user = await findUserById(deps.database.db, c.var.session.userId);
      if (!user) throw new DomainError('unauthorized');
      return c.json(await setupState(deps, deps.database.db, user), 200);
    })
    .openapi(ownerStatus, async (c) => c.json({ owner_bound: await ownerExists(c.var.deps.database.db) }, 200));
}
