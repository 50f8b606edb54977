import { z } from '@hono/zod-openapi';
import { eq } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { isStaffRole, signedInAccount } from './authenticator.js';
import { writeAudit } from '../audit/index.js';
import { checkCode, dropCode, emailDoorLockedFor, issueCode, resendCooldown } from './email-codes.js';
import { mailCode, requireMail } from './mail-codes.js';
import { EmailSchema, MeSchema, RevokedSchema, SessionListSchema, TokenHashParam } from './schema.js';
import { listLiveSessions, revokeSession, revokeUserSessions } from './session-service.js';
import { findLiveUserByEmail, findUserById, uniqueViolation } from './users-service.js';
import { toSessionView, signInRole } from './views.js';
import { recordProof, requireReauth } from '../reauth/service.js';

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
    responses: { 200: json(RevokedSchema, 'revoked'), 404: errorAnswer('session_not_found: no such live session of mine') },
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
export function accountRoutes() {
  return createRouter()
    .openapi(me, async (c) => {
      const session = c.var.session;
      // The session check read the account already (authenticator.ts); a second query only without it.
      const user = signedInAccount(c) ?? (await findUserById(c.var.deps.database.db, session.userId));
      if (!user) throw new DomainError('unauthorized');
      return c.json(
        {
          user_id: user.id,
          username: user.username,
          ...(user.email !== null ? { email: user.email } : {}),
          email_verified: user.emailVerified,
          role: signInRole(user.role),
          is_admin: isStaffRole(user.role),
          is_owner: user.role === 'owner',
          must_change_password: user.mustChangePassword,
          setup_required: user.inSetup,
        },
        200,
      );
    })
    .openapi(listSessions, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const rows = await listLiveSessions(deps.database.db, session.userId, isStaffRole(session.role), deps.clock.now());
      return c.json({ sessions: rows.map((r) => toSessionView(r, session.tokenHash)) }, 200);
    })
    .openapi(revokeOwn, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const { token_hash } = c.req.valid('param');
      const now = deps.clock.now();
      const revoked = await deps.database.db.transaction(async (tx) => {
        if (!(await revokeSession(tx, token_hash, now, session.userId))) return false;
        await writeAudit(tx, { at: now, actor: session.userId, action: 'session.revoke', target: session.userId, detail: { token_hash }, requestId: c.var.requestId });
        return true;
      });
      if (!revoked) throw new DomainError('session_not_found', 'No such live session of yours.');
      return c.json({ revoked: true as const }, 200);
    })
    .openapi(revokeOthers, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const now = deps.clock.now();
      const revoked = await deps.database.db.transaction(async (tx) => {
        const n = await revokeUserSessions(tx, session.userId, now, session.tokenHash);
        await writeAudit(tx, { at: now, actor: session.userId, action: 'session.revoke_others', target: session.userId, detail: { sessions_revoked: n }, requestId: c.var.requestId });
        return n;
      });
      return c.json({ revoked }, 200);
    })
    .openapi(setEmail, async (c) => {
      await requireReauth(c);
      const { deps } = c.var;
      const session = c.var.session;
      const email = c.req.valid('json').email.toLowerCase();
      const now = deps.clock.now();
      try {
        await deps.database.db.transaction(async (tx) => {
          const user = await findUserById(tx, session.userId);
          if (!user) throw new DomainError('unauthorized');
          if (user.email?.toLowerCase() === email) return;
          await tx.update(users).set({ email, emailVerified: false, updatedAt: now }).where(eq(users.id, session.userId));
          await writeAudit(tx, { at: now, actor: session.userId, action: 'account.email', target: session.userId, detail: { from: user.email, to: email }, requestId: c.var.requestId });
        });
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw new DomainError('conflict', 'This address belongs to another account.');
        throw err;
      }
      return c.json({ email }, 200);
    })
    .openapi(emailStart, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      await requireReauth(c);
      requireMail(deps);
      const email = c.req.valid('json').email.toLowerCase();
      const db = deps.database.db;
      const now = deps.clock.now();
      const holder = await findLiveUserByEmail(db, email);
      if (holder && holder.id !== session.userId) throw new DomainError('conflict', 'This address belongs to another account.');
      const lockedFor = await emailDoorLockedFor(db, session.userId, now);
      if (lockedFor > 0) {
        throw new DomainError('too_many_attempts', 'Too many wrong codes; e-mail codes are locked for a day.', {
          retryAfterSeconds: lockedFor,
        });
      }
      const wait = await resendCooldown(db, session.userId, email, now);
      if (wait > 0) {
        throw new DomainError('otp_resend_cooldown', 'A code was sent less than a minute ago.', { retryAfterSeconds: wait });
      }
      const { code, expiresAt } = await issueCode(db, { userId: session.userId, purpose: 'verify', email, now, random: deps.random });
      try {
        await mailCode(deps, email, code, c.var.requestId);
      } catch (err) {
        await dropCode(db, session.userId, 'verify');
        throw err;
      }
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(emailVerify, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const { code } = c.req.valid('json');
      const now = deps.clock.now();
      try {
        const email = await deps.database.db.transaction(async (tx) => {
          const check = await checkCode(tx, { userId: session.userId, purpose: 'verify', code, now });
          if (!check.ok) return check;
          // A verified address is a durable way in: it ends first-run setup lockdown.
          await tx
            .update(users)
            .set({ email: check.email, emailVerified: true, inSetup: false, updatedAt: now })
            .where(eq(users.id, session.userId));
          // A code typed back from the mailbox is a proof of its own (as the original counts it).
          await recordProof(tx, session.tokenHash, 'email', now);
          return check;
        });
        if (!email.ok) {
          if (email.reason === 'locked') {
            throw new DomainError('too_many_attempts', 'Too many wrong codes; this code is locked.', {
              retryAfterSeconds: email.retryAfter,
            });
          }
          throw new DomainError('invalid_code', 'The code is wrong, expired or already used.');
        }
        return c.json({ verified: true as const, email: email.email }, 200);
      } catch (err) {
        if (uniqueViolation(err) !== undefined) throw new DomainError('conflict', 'This address belongs to another account.');
        throw err;
      }
    });
}
