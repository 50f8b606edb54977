import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import { encodeHexLowerCase } from '@oslojs/encoding';
import type { Queryable } from '../../db/client.js';
import { users } from '../../db/schema/accounts.js';
import { opLoginRequests } from '../../db/schema/op-login.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { secretsEqual, sha256Hex } from '../../lib/secrets.js';
import { writeAudit } from '../audit/index.js';
import { isStaffRole, findUserByMcUuid, CODE_MAX_ATTEMPTS, CODE_RESEND_COOLDOWN_MS, generateCode, mailCode, cutUtf8, USER_AGENT_MAX_BYTES, findLiveUserByEmail } from '../accounts/index.js';

/** Operator-login request lifetime (api-extensions, lifetimes). */
export const OP_LOGIN_TTL_MS = 10 * 60 * 1000;

const codeHash = (requestId: string, code: string) => sha256Hex(`op-login:${requestId}:${code}`);
const live = (id: string, status: 'pending' | 'approved', now: Date) =>
  and(eq(opLoginRequests.id, id), eq(opLoginRequests.status, status), gt(opLoginRequests.expiresAt, now));

export interface StartInput {
  email: string;
  clientIp: string;
  userAgent: string;
  requestId?: string;
}

/**
 * Starts an operator login. Every address gets a request id of the same shape; only a live staff
 * account, not already sent a code in the last minute, gets a stored request and a mailed code.
 */
export async function startOpLogin(deps: Pick<Deps, 'clock' | 'random' | 'database' | 'mail' | 'log'>, input: StartInput) {
  const db = deps.database.db;
  const now = deps.clock.now();
  const id = encodeHexLowerCase(deps.random.bytes(16));
  const expiresAt = new Date(now.getTime() + OP_LOGIN_TTL_MS);
  const user = await findLiveUserByEmail(db, input.email);
  if (user && !user.disabled && isStaffRole(user.role) && user.email && !(await recentlySent(db, user.id, now))) {
    const code = generateCode(deps.random);
    await db.insert(opLoginRequests).values({
      id,
      userId: user.id,
      email: user.email,
      clientIp: input.clientIp,
      userAgent: cutUtf8(input.userAgent, USER_AGENT_MAX_BYTES),
      status: 'pending',
      codeHash: codeHash(id, code),
      createdAt: now,
      expiresAt,
    });
    try {
      await mailCode(deps, user.email, code, input.requestId);
    } catch (err) {
      await db.delete(opLoginRequests).where(eq(opLoginRequests.id, id));
      throw err;
    }
  }
  return { requestId: id, expiresAt };
}

async function recentlySent(db: Queryable, userId: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ id: opLoginRequests.id })
    .from(opLoginRequests)
    .where(and(eq(opLoginRequests.userId, userId), gt(opLoginRequests.createdAt, new Date(now.getTime() - CODE_RESEND_COOLDOWN_MS))))
    .limit(1);
  return row !== undefined;
}

/** The browser's poll: true only for a live approved request; anything else, known or not, reads false. */
export async function isApproved(db: Queryable, id: string, now: Date): Promise<boolean> {
  const [row] = await db.select({ id: opLoginRequests.id }).from(opLoginRequests).where(live(id, 'approved', now)).limit(1);
  return row !== undefined;
}

export const invalidOpLogin = () => new DomainError('op_login_invalid', 'This operator login could not be completed; start the sign-in again.');

/**
 * Spends an approved request with its mailed code and returns the staff account to sign in. The
 * attempt is counted before the code is compared (five per request), and the spend is one
 * conditional update, so a request signs in once however many finishes race.
 */
export async function finishOpLogin(db: Queryable, id: string, code: string, now: Date): Promise<{ userId: string; role: string }> {
  const [counted] = await db
    .update(opLoginRequests)
    .set({ attempts: sql`${opLoginRequests.attempts} + 1` })
    .where(and(live(id, 'approved', now), lt(opLoginRequests.attempts, CODE_MAX_ATTEMPTS)))
    .returning({ codeHash: opLoginRequests.codeHash });
  if (!counted || !/^\d{6}$/.test(code) || !secretsEqual(codeHash(id, code), counted.codeHash)) throw invalidOpLogin();
  const [spent] = await db
    .update(opLoginRequests)
    .set({ status: 'consumed', consumedAt: now })
    .where(live(id, 'approved', now))
    .returning({ userId: opLoginRequests.userId });
  if (!spent) throw invalidOpLogin();
  const [user] = await db.select({ role: users.role, disabled: users.disabled, deletedAt: users.deletedAt }).from(users).where(eq(users.id, spent.userId));
  if (!user || user.disabled || user.deletedAt || !isStaffRole(user.role)) throw invalidOpLogin();
  return { userId: spent.userId, role: user.role };
}

/** The in-game approver: a UUID linked to a live admin or owner, else 403 not_admin. */
export async function requireApprover(db: Queryable, approverUuid: string) {
  const approver = await findUserByMcUuid(db, approverUuid);
  if (!approver || approver.disabled || !isStaffRole(approver.role)) {
    throw new DomainError('not_admin', 'Only a linked administrator may approve an operator login.');
  }
  return approver;
}

const requestView = {
  request_id: opLoginRequests.id,
  username: users.username,
  email: opLoginRequests.email,
  client_ip: opLoginRequests.clientIp,
  user_agent: opLoginRequests.userAgent,
  createdAt: opLoginRequests.createdAt,
  expiresAt: opLoginRequests.expiresAt,
};

export async function pendingRequests(db: Queryable, now: Date) {
  return db
    .select(requestView)
    .from(opLoginRequests)
    .innerJoin(users, eq(users.id, opLoginRequests.userId))
    .where(and(eq(opLoginRequests.status, 'pending'), gt(opLoginRequests.expiresAt, now)))
    .orderBy(asc(opLoginRequests.createdAt), asc(opLoginRequests.id));
}

export async function pendingRequest(db: Queryable, id: string, now: Date) {
  const [row] = await db.select(requestView).from(opLoginRequests).innerJoin(users, eq(users.id, opLoginRequests.userId)).where(live(id, 'pending', now));
  if (!row) throw new DomainError('op_login_not_found', 'No pending operator login has this id.');
  return row;
}

/**
 * Approves a pending request when the typed name is its account's (ignoring case). A wrong name
 * leaves it pending and is audited. Self-approval is allowed: the approver's in-game session is a
 * second factor apart from the mailbox.
 */
export async function approveOpLogin(
  deps: Pick<Deps, 'clock' | 'database'>,
  input: { id: string; approverUuid: string; typedUsername: string; requestId?: string },
) {
  const db = deps.database.db;
  const now = deps.clock.now();
  const approver = await requireApprover(db, input.approverUuid);
  const request = await pendingRequest(db, input.id, now);
  const audit = (action: string, detail: Record<string, unknown>) =>
    writeAudit(db, { at: now, actor: approver.id, action, target: request.request_id, detail: { approver_uuid: input.approverUuid, ...detail }, requestId: input.requestId });
  if (input.typedUsername.trim().toLowerCase() !== request.username.toLowerCase()) {
    await audit('auth.op_login.mismatch', { typed_username: input.typedUsername });
    throw new DomainError('op_login_mismatch', 'That operator login is for a different account.');
  }
  const [approved] = await db
    .update(opLoginRequests)
    .set({ status: 'approved', approvedBy: approver.id, approvedAt: now })
    .where(live(input.id, 'pending', now))
    .returning({ id: opLoginRequests.id });
  if (!approved) throw new DomainError('op_login_not_found', 'No pending operator login has this id.');
  await audit('auth.op_login.approved', { username: request.username });
  return { username: request.username, email: request.email };
}
