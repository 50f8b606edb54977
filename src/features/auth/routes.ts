import { z } from '@hono/zod-openapi';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { getCookie } from 'hono/cookie';
import { users } from '../../db/schema/accounts.js';
import { ApiError } from '../../http/errors.js';
import { createRouter, defineRoute } from '../../http/route.js';
import { sha256Hex } from '../../lib/secrets.js';
import { isStaffRole } from '../accounts/authenticator.js';
import { writeAudit } from '../accounts/audit.js';
import { checkCode, CODE_TTL_MS, dropCode, emailDoorLocked, issueCode, resendCooldown } from '../accounts/email-codes.js';
import { mailCode, requireMail } from '../accounts/mail-codes.js';
import { EmailSchema, SignInRoleSchema, UsernameSchema } from '../accounts/schema.js';
import { clearSessionCookie, revokeSession, revokeUserSessions, SESSION_COOKIE, startSession } from '../accounts/session-service.js';
import { findLiveUserByEmail, findUserById, uniqueViolation } from '../accounts/users-service.js';
import { signInRole } from '../accounts/views.js';
import { refusePlayerOnConsole, requireLocalAuth } from './guards.js';
import { DUMMY_PASSWORD_HASH, hashPassword, passwordBytes, PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES, verifyPassword } from './password.js';
import { doorLimit } from './rate-limit.js';
import { ownerExists, spendSetupToken } from './setup-token.js';
import { errorAnswer, json, jsonBody } from '../accounts/route-helpers.js';

const limited = { 429: errorAnswer('rate_limited, with Retry-After') };
const SignedInSchema = z.object({ user_id: z.uuid(), role: SignInRoleSchema });
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

const login = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/login',
    summary: 'Local password sign-in',
    middleware: [doorLimit('login')],
    request: jsonBody(z.strictObject({ username: z.string().min(1).max(254), password: z.string().min(1).max(1024) })),
    responses: {
      200: json(SignedInSchema.extend({ must_change_password: z.boolean() }), 'signed in; session cookie set'),
      401: errorAnswer('invalid_credentials, the same for every failure'),
      403: errorAnswer('account_disabled, local_auth_disabled, or forbidden (player on the console host)'),
      ...limited,
    },
  },
);

const logout = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/logout',
    summary: 'End the session of this cookie (idempotent) and clear the cookie',
    responses: { 200: json(z.object({ ok: z.literal(true) }), 'signed out') },
  },
);

const changePassword = defineRoute(
  { tier: 'app' },
  {
    method: 'post',
    path: '/api/v1/auth/change-password',
    summary: 'Change the local password; every other session of the account is revoked',
    request: jsonBody(z.strictObject({ current_password: z.string().min(1).max(1024), new_password: z.string().min(1).max(1024) })),
    responses: {
      200: json(z.object({ ok: z.literal(true) }), 'changed'),
      401: errorAnswer('invalid_credentials: the current password is wrong'),
    },
  },
);

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

const invalidCode = () => new ApiError('invalid_code', 'The code is wrong, expired or already used.');

/** The public sign-in doors and password change. External face. */
export function authRoutes() {
  return createRouter()
    .openapi(options, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const user = await findLiveUserByEmail(deps.database.db, c.req.valid('json').email);
      const methods: Array<'passkey' | 'email_otp'> = [];
      // Staff sign in by passkey or operator login, never by an e-mailed code.
      if (user && !user.disabled && !isStaffRole(user.role) && user.emailVerified && deps.mail) methods.push('email_otp');
      return c.json({ methods }, 200);
    })
    .openapi(emailStart, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      requireMail(deps);
      const email = c.req.valid('json').email.toLowerCase();
      const db = deps.database.db;
      const now = deps.clock.now();
      const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
      const user = await findLiveUserByEmail(db, email);
      // Unknown, staff, disabled, locked and cooling-down addresses get the same answer, unsent.
      if (
        user &&
        !user.disabled &&
        !isStaffRole(user.role) &&
        !(await emailDoorLocked(db, user.id, now)) &&
        (await resendCooldown(db, user.id, email, now)) === 0
      ) {
        const issued = await issueCode(db, { userId: user.id, purpose: 'signin', email, now, random: deps.random });
        try {
          await mailCode(deps, email, issued.code, c.var.requestId);
        } catch (err) {
          await dropCode(db, user.id, 'signin');
          throw err;
        }
      }
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
      if (isStaffRole(user.role)) throw new ApiError('staff_account', 'Staff sign in by passkey or operator login.');
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
    })
    .openapi(login, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const { username, password } = c.req.valid('json');
      const [user] = await deps.database.db
        .select()
        .from(users)
        .where(and(sql`lower(${users.username}) = ${username.toLowerCase()}`, isNull(users.deletedAt)))
        .limit(1);
      // Unknown users and users without a password are checked against a dummy hash: same time.
      const matches = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
      if (!user || !user.passwordHash || !matches) throw new ApiError('invalid_credentials', 'Wrong username or password.');
      if (user.disabled) throw new ApiError('account_disabled', 'This account is disabled.');
      refusePlayerOnConsole(c, user.role);
      await startSession(c, deps.database.db, user.id, 'password');
      return c.json({ user_id: user.id, role: signInRole(user.role), must_change_password: user.mustChangePassword }, 200);
    })
    .openapi(logout, async (c) => {
      const { deps } = c.var;
      const token = getCookie(c, SESSION_COOKIE);
      if (token && token.length <= 128) await revokeSession(deps.database.db, sha256Hex(token), deps.clock.now());
      clearSessionCookie(c);
      return c.json({ ok: true as const }, 200);
    })
    .openapi(changePassword, async (c) => {
      requireLocalAuth(c);
      const { deps } = c.var;
      const session = c.var.session!;
      const body = c.req.valid('json');
      const size = passwordBytes(body.new_password);
      if (size < PASSWORD_MIN_BYTES || size > PASSWORD_MAX_BYTES) {
        throw new ApiError('bad_request', `The new password must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes.`);
      }
      if (body.new_password.normalize('NFC') === body.current_password.normalize('NFC')) {
        throw new ApiError('bad_request', 'The new password must differ from the current one.');
      }
      const user = await findUserById(deps.database.db, session.userId);
      const matches = await verifyPassword(body.current_password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
      if (!user?.passwordHash || !matches) throw new ApiError('invalid_credentials', 'The current password is wrong.');
      const hash = await hashPassword(body.new_password);
      const now = deps.clock.now();
      await deps.database.db.transaction(async (tx) => {
        await tx.update(users).set({ passwordHash: hash, mustChangePassword: false, updatedAt: now }).where(eq(users.id, user.id));
        const revoked = await revokeUserSessions(tx, user.id, now, session.tokenHash);
        await writeAudit(tx, {
          at: now,
          actor: user.id,
          action: 'password.change',
          target: user.id,
          detail: { sessions_revoked: revoked },
          requestId: c.var.requestId,
        });
      });
      return c.json({ ok: true as const }, 200);
    })
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
