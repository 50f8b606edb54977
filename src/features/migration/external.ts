import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { and, eq } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { accountMigrations } from '../../db/schema/migration.js';
import type { AppEnv, SignedInEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { CODE_MAX_ATTEMPTS, CODE_RESEND_COOLDOWN_MS, CODE_TTL_MS, generateCode, mailCode, requireMail } from '../accounts/index.js';
import { CodeBody, DateTime } from '../linking/index.js';
import { userHasPasskey, beginOwnAssertion, finishOwnAssertion, type OwnCeremony, AssertionSchema, WebAuthnOptionsSchema } from '../passkeys/index.js';

import {
  CONFIRM_WINDOW_MS,
  confirmByCode,
  confirmCodeHash,
  issueMigrationCode,
  liveMigration,
  markConfirmed,
  redeemMigration,
  requireAtStepUp,
  stageOf,
} from './service.js';

const APP = { tier: 'app' } as const;
const noMigration = errorAnswer('no_migration: none in progress');

const status = defineRoute(APP, {
  method: 'get',
  path: '/api/v1/account/migrate',
  summary: 'The caller’s migration, as far as this session stands in it',
  responses: {
    200: json(
      z.object({
        active: z.boolean(),
        state: z.enum(['initiated', 'confirmed', 'code_issued']).optional(),
        target_user_id: z.uuid().optional(),
        confirm_factor: z.enum(['email_otp', 'passkey']).optional(),
        confirm_expires_at: DateTime.optional(),
        code_expires_at: DateTime.optional(),
      }),
      'migration state',
    ),
  },
});

const otpStart = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/account/migrate/confirm/otp/start',
  summary: 'Mail a step-up code to the account’s verified address',
  responses: {
    202: json(z.object({ sent: z.literal(true), expires_at: DateTime }), 'code sent'),
    404: noMigration,
    409: errorAnswer('already_confirmed; passkey_required: the account has a passkey; no_step_up_factor: no verified address'),
    429: errorAnswer('otp_resend_cooldown, with Retry-After'),
    502: errorAnswer('mail_undeliverable'),
    503: errorAnswer('mail_unavailable'),
  },
});

const otpVerify = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/account/migrate/confirm/otp/verify',
  summary: 'Confirm the migration with the mailed step-up code',
  request: jsonBody(z.strictObject({ code: z.string().min(1).max(64) })),
  responses: {
    200: json(z.object({ confirmed: z.literal(true) }), 'confirmed for this session, 10 minutes'),
    400: errorAnswer('invalid_code; bad_request'),
    404: noMigration,
    409: errorAnswer('already_confirmed'),
    429: errorAnswer('too_many_attempts: ask for a new code'),
  },
});

const passkeyBegin = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/account/migrate/confirm/passkey/begin',
  summary: 'Start the step-up with one of the account’s passkeys',
  responses: {
    200: json(z.object({ publicKey: WebAuthnOptionsSchema }), 'request options for navigator.credentials.get()'),
    400: errorAnswer('no_passkey'),
    404: noMigration,
    409: errorAnswer('already_confirmed'),
    503: errorAnswer('passkey_unavailable'),
  },
});

const passkeyFinish = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/account/migrate/confirm/passkey/finish',
  summary: 'Confirm the migration with the assertion',
  request: jsonBody(z.strictObject({ assertion: AssertionSchema })),
  responses: {
    200: json(z.object({ confirmed: z.literal(true) }), 'confirmed for this session, 10 minutes'),
    400: errorAnswer('passkey_login_invalid; bad_request'),
    404: noMigration,
    409: errorAnswer('already_confirmed'),
    503: errorAnswer('passkey_unavailable'),
  },
});

/** The step-up ceremony belongs to the session that began it, apart from its reauth ceremony. */
const ceremonyOf = (c: Context<SignedInEnv>): OwnCeremony => ({ purpose: 'reauth', subject: `migrate:${c.var.session.tokenHash}`, userId: c.var.session.userId });

const issue = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/account/migrate/issue-code',
  summary: 'Name the target account and mint the one-time code it redeems',
  request: jsonBody(z.strictObject({ target_user_id: z.uuid() })),
  responses: {
    201: json(z.object({ code: z.string(), expires_at: DateTime }), 'the code (shown once)'),
    400: errorAnswer('invalid_target, target_not_found, target_unavailable; bad_request'),
    404: noMigration,
    409: errorAnswer('not_confirmed: no step-up on this session in the last 10 minutes'),
  },
});

const redeem = defineRoute(APP, {
  method: 'post',
  path: '/api/v1/account/migrate/redeem',
  summary: 'As the named target, take over the source account’s servers',
  request: jsonBody(CodeBody),
  responses: {
    200: json(z.object({ migrated: z.literal(true), servers_moved: z.number().int(), servers: z.array(z.string()) }), 'servers moved'),
    400: errorAnswer('invalid_code; bad_request'),
  },
});

const iso = (d: Date | null) => (d ? d.toISOString() : undefined);

/** The web side of migration, as the original panel drives it. External face, app tier. */
export function externalMigrationRoutes() {
  return createRouter()
    .openapi(status, async (c) => {
      const { deps, session } = c.var;
      const now = deps.clock.now();
      const m = await liveMigration(deps.database.db, session.userId);
      if (!m) return c.json({ active: false }, 200);
      const state = stageOf(m, session.tokenHash, now);
      return c.json(
        {
          active: true,
          state,
          ...(state !== 'initiated' ? { confirm_factor: m.confirmFactor ?? undefined } : {}),
          ...(state === 'confirmed' ? { confirm_expires_at: new Date(m.confirmedAt!.getTime() + CONFIRM_WINDOW_MS).toISOString() } : {}),
          ...(state === 'code_issued' ? { target_user_id: m.targetUserId ?? undefined, code_expires_at: iso(m.codeExpiresAt) } : {}),
        },
        200,
      );
    })
    .openapi(otpStart, async (c) => {
      const { deps, session } = c.var;
      const db = deps.database.db;
      const now = deps.clock.now();
      const m = await requireAtStepUp(db, session.userId, session.tokenHash, now);
      const [user] = await db.select({ email: users.email, verified: users.emailVerified }).from(users).where(eq(users.id, session.userId));
      // A strong factor is not downgraded to e-mail for a transfer of servers.
      if (await userHasPasskey(db, session.userId)) throw new DomainError('passkey_required', 'This account has a passkey; confirm the migration with it.');
      if (!user?.email || !user.verified) throw new DomainError('no_step_up_factor', 'No verified address on this account to confirm the migration.');
      requireMail(deps);
      const sentAt = m.confirmCodeExpiresAt ? m.confirmCodeExpiresAt.getTime() - CODE_TTL_MS : -Infinity;
      const wait = Math.ceil((sentAt + CODE_RESEND_COOLDOWN_MS - now.getTime()) / 1000);
      if (wait > 0) throw new DomainError('otp_resend_cooldown', 'A code was sent moments ago.', { retryAfterSeconds: wait });
      const code = generateCode(deps.random);
      const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
      await db
        .update(accountMigrations)
        .set({ confirmCodeHash: confirmCodeHash(m.id, code), confirmCodeExpiresAt: expiresAt, confirmAttempts: 0 })
        .where(and(eq(accountMigrations.id, m.id)));
      await mailCode(deps, user.email, code, c.var.requestId);
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(otpVerify, async (c) => {
      const { deps, session } = c.var;
      const db = deps.database.db;
      const now = deps.clock.now();
      const m = await requireAtStepUp(db, session.userId, session.tokenHash, now);
      await confirmByCode(db, m, c.req.valid('json').code.trim(), session.tokenHash, now, CODE_MAX_ATTEMPTS);
      return c.json({ confirmed: true as const }, 200);
    })
    .openapi(passkeyBegin, async (c) => {
      const { deps, session } = c.var;
      await requireAtStepUp(deps.database.db, session.userId, session.tokenHash, deps.clock.now());
      return c.json({ publicKey: await beginOwnAssertion(deps, ceremonyOf(c)) }, 200);
    })
    .openapi(passkeyFinish, async (c) => {
      const { deps, session } = c.var;
      const db = deps.database.db;
      const m = await requireAtStepUp(db, session.userId, session.tokenHash, deps.clock.now());
      await finishOwnAssertion(deps, ceremonyOf(c), c.req.valid('json').assertion, c.var.requestId);
      if (!(await markConfirmed(db, m, 'passkey', session.tokenHash, deps.clock.now()))) {
        throw new DomainError('no_migration', 'The migration ended while the passkey was asked.');
      }
      return c.json({ confirmed: true as const }, 200);
    })
    .openapi(issue, async (c) => {
      const { deps, session } = c.var;
      const issued = await issueMigrationCode(deps, {
        userId: session.userId,
        sessionHash: session.tokenHash,
        targetUserId: c.req.valid('json').target_user_id,
        requestId: c.var.requestId,
      });
      return c.json({ code: issued.code, expires_at: issued.expiresAt.toISOString() }, 201);
    })
    .openapi(redeem, async (c) => {
      const { deps, session } = c.var;
      const servers = await redeemMigration(deps, { userId: session.userId, typed: c.req.valid('json').code, requestId: c.var.requestId });
      return c.json({ migrated: true as const, servers_moved: servers.length, servers }, 200);
    });
}
