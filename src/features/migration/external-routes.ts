import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { CodeBody, DateTime } from '../linking/index.js';
import { codeAttemptLimit, limited } from '../doors/index.js';
import { AssertionSchema, WebAuthnOptionsSchema } from '../passkeys/index.js';
import { beginPasskeyConfirm, confirmWithCode, confirmWithPasskey, sendConfirmCode } from './confirm.js';
import { issueMigrationCode, migrationStatus, redeemMigration } from './service.js';

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
  middleware: [codeAttemptLimit('migrate')],
  request: jsonBody(CodeBody),
  responses: {
    200: json(z.object({ migrated: z.literal(true), servers_moved: z.number().int(), servers: z.array(z.string()) }), 'servers moved'),
    400: errorAnswer('invalid_code; bad_request'),
    ...limited,
  },
});

/** The web side of migration, as the original panel drives it. External face, app tier. */
export function externalMigrationRoutes() {
  return createRouter()
    .openapi(status, async (c) => c.json(await migrationStatus(c.var.deps, c.var.session), 200))
    .openapi(otpStart, async (c) => {
      const expiresAt = await sendConfirmCode(c.var.deps, c.var.session, c.var.requestId);
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(otpVerify, async (c) => {
      await confirmWithCode(c.var.deps, c.var.session, c.req.valid('json').code);
      return c.json({ confirmed: true as const }, 200);
    })
    .openapi(passkeyBegin, async (c) => c.json({ publicKey: await beginPasskeyConfirm(c.var.deps, c.var.session) }, 200))
    .openapi(passkeyFinish, async (c) => {
      await confirmWithPasskey(c.var.deps, c.var.session, c.req.valid('json').assertion, c.var.requestId);
      return c.json({ confirmed: true as const }, 200);
    })
    .openapi(issue, async (c) => {
      const issued = await issueMigrationCode(c.var.deps, c.var.session, c.req.valid('json').target_user_id, c.var.requestId);
      return c.json({ code: issued.code, expires_at: issued.expiresAt.toISOString() }, 201);
    })
    .openapi(redeem, async (c) => {
      const servers = await redeemMigration(c.var.deps, c.var.session, c.req.valid('json').code, c.var.requestId);
      return c.json({ migrated: true as const, servers_moved: servers.length, servers }, 200);
    });
}
