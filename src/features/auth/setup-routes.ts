import { z } from '@hono/zod-openapi';
import { users } from '../../db/schema/accounts.js';
import { ApiError } from '../../http/errors.js';
import { createRouter, defineRoute } from '../../http/route.js';
import { writeAudit } from '../accounts/audit.js';
import { errorAnswer, json, jsonBody } from '../../http/route.js';
import { EmailSchema, UsernameSchema } from '../accounts/schema.js';
import { startSession } from '../accounts/session-service.js';
import { uniqueViolation } from '../accounts/users-service.js';
import { doorLimit } from './rate-limit.js';
import { limited } from './schema.js';
import { ownerExists, spendSetupToken } from './setup-token.js';

const setupClaim = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/setup/claim',
    summary: 'First run: turn the setup token into the owner account and a session in setup lockdown',
    middleware: [doorLimit('setup')],
    request: jsonBody(z.strictObject({ token: z.string().min(1).max(256), username: UsernameSchema, email: EmailSchema.optional() })),
    responses: {
      201: json(z.object({ user_id: z.uuid(), role: z.literal('owner') }), 'owner created; session cookie set'),
      409: errorAnswer('already_claimed, or conflict (username or e-mail taken)'),
      ...limited,
    },
  },
);

/** First-run owner claim. External face, public. */
export function setupRoutes() {
  return createRouter()
    .openapi(setupClaim, async (c) => {
      const { deps } = c.var;
      const body = c.req.valid('json');
      const now = deps.clock.now();
      try {
        const userId = await deps.database.db.transaction(async (tx) => {
          if (!(await spendSetupToken(tx, body.token, now))) throw new ApiError('invalid_code', 'The setup token is wrong, expired or already used.');
          if (await ownerExists(tx)) throw new ApiError('already_claimed', 'An owner already exists.');
          const [owner] = await tx
            .insert(users)
            .values({
              username: body.username,
              email: body.email?.toLowerCase() ?? null,
              role: 'owner',
              inSetup: true,
              createdAt: now,
              updatedAt: now,
            })
            .returning({ id: users.id });
          await writeAudit(tx, { at: now, actor: owner!.id, action: 'setup.claim', target: owner!.id, requestId: c.var.requestId });
          await startSession(c, tx, owner!.id, 'setup_token');
          return owner!.id;
        });
        return c.json({ user_id: userId, role: 'owner' as const }, 201);
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw new ApiError('conflict', 'That username or e-mail address is taken.');
        throw err;
      }
    });
}
