import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv, SignedInEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { isStaffRole } from '../accounts/authenticator.js';
import { checkCode, dropCode, emailDoorLocked, issueCode, resendCooldown } from '../accounts/email-codes.js';
import { mailCode, requireMail } from '../accounts/mail-codes.js';
import { findUserById } from '../accounts/users-service.js';
import { beginOwnAssertion, finishOwnAssertion, type OwnCeremony } from '../passkeys/own-assertion.js';
import { AssertionSchema, WebAuthnOptionsSchema } from '../passkeys/schema.js';
import { reauthStatus, recordProof, type ProofFactor } from './service.js';

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

/** A reauth ceremony belongs to the session that began it: the proof goes to that session only. */
const ceremonyOf = (c: Context<SignedInEnv>): OwnCeremony => ({ purpose: 'reauth', subject: c.var.session.tokenHash, userId: c.var.session.userId });

async function proven(c: Context<SignedInEnv>, factor: ProofFactor) {
  const until = await recordProof(c.var.deps.database.db, c.var.session.tokenHash, factor, c.var.deps.clock.now());
  return c.json({ ok: true as const, until: until.toISOString() }, 200);
}

/** The e-mail factor is a player's verified address; staff signing in by e-mail also need the game's approval. */
async function emailFactorOf(c: Context<SignedInEnv>): Promise<string> {
  const session = c.var.session;
  if (isStaffRole(session.role)) throw new DomainError('staff_reauth', 'Operators confirm with a passkey or by signing in again.');
  const user = await findUserById(c.var.deps.database.db, session.userId);
  if (!user?.email || !user.emailVerified) throw new DomainError('no_step_up_factor', 'There is no verified e-mail address on this account to send a code to.');
  return user.email;
}

/** Proof before changes to the ways into an account. External face. */
export function reauthRoutes() {
  return createRouter()
    .openapi(status, async (c) => c.json(await reauthStatus(c.var.deps, c.var.session), 200))
    .openapi(passkeyBegin, async (c) => c.json({ publicKey: await beginOwnAssertion(c.var.deps, ceremonyOf(c)) }, 200))
    .openapi(passkeyFinish, async (c) => {
      await finishOwnAssertion(c.var.deps, ceremonyOf(c), c.req.valid('json').assertion, c.var.requestId);
      return proven(c, 'passkey');
    })
    .openapi(emailStart, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      requireMail(deps);
      const email = await emailFactorOf(c);
      const db = deps.database.db;
      const now = deps.clock.now();
      if (await emailDoorLocked(db, session.userId, now)) {
        throw new DomainError('too_many_attempts', 'Too many wrong codes; e-mail codes are locked for a day.');
      }
      const wait = await resendCooldown(db, session.userId, email, now);
      if (wait > 0) throw new DomainError('otp_resend_cooldown', 'A code was sent less than a minute ago.', { retryAfterSeconds: wait });
      const { code, expiresAt } = await issueCode(db, { userId: session.userId, purpose: 'reauth', email, now, random: deps.random });
      try {
        await mailCode(deps, email, code, c.var.requestId);
      } catch (err) {
        await dropCode(db, session.userId, 'reauth');
        throw err;
      }
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(emailVerify, async (c) => {
      const { deps } = c.var;
      await emailFactorOf(c);
      const check = await checkCode(deps.database.db, { userId: c.var.session.userId, purpose: 'reauth', code: c.req.valid('json').code, now: deps.clock.now() });
      if (!check.ok) {
        if (check.reason === 'locked') throw new DomainError('too_many_attempts', 'Too many wrong codes; this code is locked.');
        throw new DomainError('invalid_code', 'The code is wrong, expired or already used.');
      }
      return proven(c, 'email');
    });
}
