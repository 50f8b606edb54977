import { z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { isStaffRole } from '../accounts/authenticator.js';
import { checkCode, CODE_TTL_MS, dropCode, emailDoorLocked, issueCode, resendCooldown } from '../accounts/email-codes.js';
import { mailCode, requireMail } from '../accounts/mail-codes.js';
import { EmailSchema } from '../accounts/schema.js';
import { startSession } from '../accounts/session-service.js';
import { findLiveUserByEmail } from '../accounts/users-service.js';
import { signInRole } from '../accounts/views.js';
import { userHasPasskey } from '../passkeys/credentials.js';
import { relyingPartyOf } from '../passkeys/relying-party.js';
import { refusePlayerOnConsole, requireLocalAuth } from './guards.js';
import { settleAtFixedTime } from './fixed-time.js';
import { doorLimit } from './rate-limit.js';
import { limited, SignedInSchema } from './schema.js';

const DateTime = z.iso.datetime({ offset: true });

const options = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/options',
    summary: 'The sign-in methods of an address, passkey first; empty for an unknown address',
    middleware: [doorLimit('options')],
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      200: json(z.object({ methods: z.array(z.enum(['passkey', 'email_otp'])) }), 'methods'),
      403: errorAnswer('local_auth_disabled'),
      ...limited,
    },
  },
);

const emailStart = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/email/start',
    summary: 'Mail a sign-in code; the answer is the same for every address',
    middleware: [doorLimit('email')],
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      202: json(z.object({ sent: z.literal(true), expires_at: DateTime }), 'accepted'),
      403: errorAnswer('local_auth_disabled'),
      502: errorAnswer('mail_undeliverable'),
      503: errorAnswer('mail_unavailable'),
      ...limited,
    },
  },
);

const emailVerify = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/email/verify',
    summary: 'Sign in with a mailed code',
    middleware: [doorLimit('email-verify')],
    request: jsonBody(z.strictObject({ email: EmailSchema, code: z.string().min(1).max(64) })),
    responses: {
      200: json(SignedInSchema, 'signed in; session cookie set'),
      403: errorAnswer('staff_account, local_auth_disabled, or forbidden (player on the console host)'),
      ...limited,
    },
  },
);

const invalidCode = () => new DomainError('invalid_code', 'The code is wrong, expired or already used.');

/** Sign-in options and the e-mail code door. External face, public. */
export function emailDoorRoutes() {
  return createRouter()
    .openapi(options, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const user = await findLiveUserByEmail(deps.database.db, c.req.valid('json').email);
      const methods: Array<'passkey' | 'email_otp'> = [];
      if (user && !user.disabled && relyingPartyOf(deps.config) && (await userHasPasskey(deps.database.db, user.id))) methods.push('passkey');
      // Staff sign in by passkey or operator login, never by an e-mailed code.
      if (user && !user.disabled && !isStaffRole(user.role) && user.emailVerified && deps.mail) methods.push('email_otp');
      return c.json({ methods }, 200);
    })
    .openapi(emailStart, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      requireMail(deps);
      const startedAt = performance.now();
      const email = c.req.valid('json').email.toLowerCase();
      const db = deps.database.db;
      const now = deps.clock.now();
      const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
      // Unknown, staff, disabled, locked and cooling-down addresses get the same answer, unsent,
      // at the same moment as a known one whose code went out (EMAIL_DOOR_ANSWER_MS after arrival).
      const work = (async () => {
        const user = await findLiveUserByEmail(db, email);
        if (
          !user ||
          user.disabled ||
          isStaffRole(user.role) ||
          (await emailDoorLocked(db, user.id, now)) ||
          (await resendCooldown(db, user.id, email, now)) > 0
        ) {
          return;
        }
        const issued = await issueCode(db, { userId: user.id, purpose: 'signin', email, now, random: deps.random });
        try {
          await mailCode(deps, email, issued.code, c.var.requestId);
        } catch (err) {
          await dropCode(db, user.id, 'signin');
          throw err;
        }
      })();
      await settleAtFixedTime(work, startedAt, deps.config.emailDoorAnswerMs, (err) =>
        deps.log.warn({ err, request_id: c.var.requestId }, 'sign-in code: mail failed after the answer'),
      );
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(emailVerify, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const body = c.req.valid('json');
      const db = deps.database.db;
      const now = deps.clock.now();
      const user = await findLiveUserByEmail(db, body.email);
      if (!user || user.disabled) throw invalidCode();
      if (isStaffRole(user.role)) throw new DomainError('staff_account', 'Staff sign in by passkey or operator login.');
      refusePlayerOnConsole(c, user.role);
      const signedIn = await db.transaction(async (tx) => {
        const check = await checkCode(tx, { userId: user.id, purpose: 'signin', code: body.code, now });
        if (!check.ok || check.email.toLowerCase() !== body.email.toLowerCase()) return false;
        // Typing the code back proves the address (an address set by staff starts unverified).
        await tx.update(users).set({ emailVerified: true, updatedAt: now }).where(eq(users.id, user.id));
        await startSession(c, tx, user.id, 'email_otp');
        return true;
      });
      if (!signedIn) throw invalidCode();
      return c.json({ user_id: user.id, role: signInRole(user.role) }, 200);
    });
}
