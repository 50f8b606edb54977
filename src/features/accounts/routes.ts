import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { apiKeyRoutes } from './keys/index.js';
import type { AccountsParts } from './parts.js';
import { requestHost, staffPagesHere } from './sessions/index.js';
import { EmailSchema, MeSchema, OwnSessionRevokedSchema, SessionListSchema, TokenHashParam } from './schema.js';
import { clearSessionCookie } from './sessions/index.js';
import { accountOf, changeEmail, ownSessions, revokeOtherSessions, revokeOwnSession, startEmailVerification, verifyEmail } from './service.js';

const me = defineRoute(
  { tier: 'app', setupAllowed: true },
  { method: 'get', path: '/api/v1/me', summary: 'The signed-in account', responses: { 200: json(MeSchema, 'the account') } },
);

const listSessions = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/account/sessions',
    summary: 'My live sessions, newest first, with `current` on this one',
    responses: { 200: json(SessionListSchema, 'sessions') },
  },
);

const revokeOwn = defineRoute(
  { tier: 'app' },
  {
    method: 'delete',
    path: '/api/v1/account/sessions/{token_hash}',
    summary: 'Revoke one of my sessions',
    request: { params: TokenHashParam },
    responses: {
      200: json(OwnSessionRevokedSchema, 'revoked; `signed_out` when it was the session of this request (its cookie is cleared)'),
      404: errorAnswer('session_not_found: no such live session of mine'),
    },
  },
);

const revokeOthers = defineRoute(
  { tier: 'app' },
  {
    method: 'post',
    path: '/api/v1/account/sessions/revoke-others',
    summary: 'Sign out everywhere else: every live session but this one is revoked',
    responses: { 200: json(z.object({ revoked: z.number().int() }), 'how many were revoked') },
  },
);

const setEmail = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'post',
    path: '/api/v1/account/email',
    summary: 'Record an e-mail address for the account, unverified until its code is typed back',
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      200: json(z.object({ email: z.string() }), 'recorded'),
      403: errorAnswer('reauth_required: changing the address needs a proof of the last 5 minutes'),
      409: errorAnswer('conflict: the address belongs to another account'),
    },
  },
);

const emailStart = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'post',
    path: '/api/v1/account/email/start',
    summary: 'Mail a one-time code to an address to verify it (supersedes any earlier code)',
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      202: json(z.object({ sent: z.literal(true), expires_at: z.iso.datetime({ offset: true }) }), 'code sent'),
      403: errorAnswer('reauth_required, or forbidden, setup_required, cross_site'),
      409: errorAnswer('the address belongs to another account'),
      429: errorAnswer('otp_resend_cooldown, or too_many_attempts when the e-mail door is locked'),
      502: errorAnswer('mail_undeliverable'),
      503: errorAnswer('mail_unavailable'),
    },
  },
);

const emailVerify = defineRoute(
  { tier: 'app', setupAllowed: true },
  {
    method: 'post',
    path: '/api/v1/account/email/verify',
    summary: 'Type back the mailed code: the address becomes the verified address of the account',
    request: jsonBody(z.strictObject({ code: z.string().min(1).max(64) })),
    responses: {
      200: json(z.object({ verified: z.literal(true), email: z.string() }), 'verified'),
      409: errorAnswer('the address was taken by another account meanwhile'),
      429: errorAnswer('too_many_attempts: code locked'),
    },
  },
);

/** The signed-in account: `/me`, own sessions, own e-mail address. External face. */
export function accountRoutes(parts: AccountsParts) {
  return createRouter()
    // The session check read the account already (authenticator.ts): `/me` needs no query of its own.
    .openapi(me, (c) => {
      // c.get, not c.var (a fresh object of every variable on each read); synchronous when the
      // session check read the account, as it does on every live session.
      const deps = c.get('deps');
      const account = accountOf(deps, c.get('session'), parts.signedInAccounts?.of(c), staffPagesHere(deps.config, requestHost(c)));
      return account instanceof Promise ? account.then((me) => c.json(me, 200)) : c.json(account, 200);
    })
    .openapi(listSessions, async (c) => c.json({ sessions: await ownSessions(c.var.deps, c.var.session) }, 200))
    .openapi(revokeOwn, async (c) => {
      const signedOut = await revokeOwnSession(c.var.deps, c.var.session, c.req.valid('param').token_hash, c.var.requestId);
      if (signedOut) clearSessionCookie(c);
      return c.json({ ok: true as const, signed_out: signedOut }, 200);
    })
    .openapi(revokeOthers, async (c) => c.json({ revoked: await revokeOtherSessions(c.var.deps, c.var.session, c.var.requestId) }, 200))
    .openapi(setEmail, async (c) => c.json({ email: await changeEmail(c.var.deps, c.var.session, c.req.valid('json').email, c.var.requestId) }, 200))
    .openapi(emailStart, async (c) => {
      const expiresAt = await startEmailVerification(c.var.deps, c.var.session, c.req.valid('json').email, c.var.requestId);
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(emailVerify, async (c) => {
      const email = await verifyEmail(c.var.deps, c.var.session, c.req.valid('json').code);
      return c.json({ verified: true as const, email }, 200);
    })
    .include(apiKeyRoutes());
}
