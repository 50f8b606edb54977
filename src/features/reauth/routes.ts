import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { AssertionSchema, WebAuthnOptionsSchema } from '../passkeys/index.js';
import { beginPasskeyProof, proveEmail, provePasskey, reauthStatus, sendProofCode } from './service.js';

// Every reauth route is setup-allowed (api-extensions): a proof may be owed before setup ends.
const SETUP_ALLOWED = { tier: 'app', setupAllowed: true } as const;
const DateTime = z.iso.datetime({ offset: true });
const ReauthedSchema = z.object({ ok: z.literal(true), until: DateTime }).openapi('Reauthed');

const status = defineRoute(SETUP_ALLOWED, {
  method: 'get',
  path: '/api/v1/account/reauth',
  summary: 'Whether a change to the ways into the account needs a fresh proof, and which factors can give it',
  responses: {
    200: json(
      z.object({ needed: z.boolean(), until: DateTime.optional(), factors: z.array(z.enum(['passkey', 'email', 'sign_in'])) }).openapi('ReauthStatus'),
      'reauth status',
    ),
  },
});

const passkeyBegin = defineRoute(SETUP_ALLOWED, {
  method: 'post',
  path: '/api/v1/account/reauth/passkey/begin',
  summary: 'Start a proof with one of my passkeys',
  responses: {
    200: json(z.object({ publicKey: WebAuthnOptionsSchema }), 'request options for navigator.credentials.get()'),
    400: errorAnswer('no_passkey'),
    503: errorAnswer('passkey_unavailable'),
  },
});

const passkeyFinish = defineRoute(SETUP_ALLOWED, {
  method: 'post',
  path: '/api/v1/account/reauth/passkey/finish',
  summary: 'Give the proof: the assertion',
  request: jsonBody(z.strictObject({ assertion: AssertionSchema })),
  responses: { 200: json(ReauthedSchema, 'proven'), 400: errorAnswer('bad_request or passkey_login_invalid'), 503: errorAnswer('passkey_unavailable') },
});

const emailStart = defineRoute(SETUP_ALLOWED, {
  method: 'post',
  path: '/api/v1/account/reauth/email/start',
  summary: 'Mail a code to my verified address (players; staff prove with a passkey or by signing in again)',
  responses: {
    202: json(z.object({ sent: z.literal(true), expires_at: DateTime }), 'code sent'),
    403: errorAnswer('staff_reauth, or forbidden, setup_required, cross_site'),
    409: errorAnswer('no_step_up_factor: no verified address'),
    429: errorAnswer('otp_resend_cooldown, or too_many_attempts when the e-mail door is locked'),
    502: errorAnswer('mail_undeliverable'),
    503: errorAnswer('mail_unavailable'),
  },
});

const emailVerify = defineRoute(SETUP_ALLOWED, {
  method: 'post',
  path: '/api/v1/account/reauth/email/verify',
  summary: 'Give the proof: the mailed code',
  request: jsonBody(z.strictObject({ code: z.string().min(1).max(64) })),
  responses: {
    200: json(ReauthedSchema, 'proven'),
    400: errorAnswer('bad_request or invalid_code'),
    403: errorAnswer('staff_reauth, or forbidden, setup_required, cross_site'),
    409: errorAnswer('no_step_up_factor'),
    429: errorAnswer('too_many_attempts: code locked'),
  },
});

/** Proof before changes to the ways into an account. External face. */
export function reauthRoutes() {
  return createRouter()
    .openapi(status, async (c) => c.json(await reauthStatus(c.var.deps, c.var.session), 200))
    .openapi(passkeyBegin, async (c) => c.json({ publicKey: await beginPasskeyProof(c.var.deps, c.var.session) }, 200))
    .openapi(passkeyFinish, async (c) => {
      const until = await provePasskey(c.var.deps, c.var.session, c.req.valid('json').assertion, c.var.requestId);
      return c.json({ ok: true as const, until: until.toISOString() }, 200);
    })
    .openapi(emailStart, async (c) => {
      const expiresAt = await sendProofCode(c.var.deps, c.var.session, c.var.requestId);
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(emailVerify, async (c) => {
      const until = await proveEmail(c.var.deps, c.var.session, c.req.valid('json').code);
      return c.json({ ok: true as const, until: until.toISOString() }, 200);
    });
}
