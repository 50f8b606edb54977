import { and, asc, desc, eq, gt, lt, sql } from 'drizzle-orm';
import { encodeHexLowerCase } from '@oslojs/encoding';
import type { Queryable } from '../../db/client.js';
import { opLoginRequests } from '../../db/schema/op-login.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { sha256Hex } from '../../lib/secrets.js';
import {
  CODE_MAX_ATTEMPTS,
  codeMatches,
  cutUtf8,
  findLiveUserByEmail,
  findUserById,
  findUserByMcUuid,
  generateCode,
  isConsoleHost,
  isStaffRole,
  mailCode,
  mintSession,
  requireMail,
  resendWait,
  USER_AGENT_MAX_BYTES,
  usernameOf,
  type SignInClient,
} from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { requireLocalAuth, type SignedIn } from '../doors/index.js';

/** Operator-login request lifetime (api-extensions, lifetimes). */
export const OP_LOGIN_TTL_MS = 10 * 60 * 1000;

const codeHash = (requestId: string, code: string) => sha256Hex(`op-login:${requestId}:${code}`);
const live = (id: string, status: 'pending' | 'approved', now: Date) =>
  and(eq(opLoginRequests.id, id), eq(opLoginRequests.status, status), gt(opLoginRequests.expiresAt, now));

/**
 * Starts an operator login. Every address gets a request id of the same shape; only a live staff
 * account, not already sent a code in the last minute, gets a stored request and a mailed code.
 */
export async function startOpLogin(
  deps: Pick<Deps, 'config' | 'clock' | 'random' | 'database' | 'mail' | 'log'>,
  email: string,
  client: SignInClient,
  requestId?: string,
) {
  requireLocalAuth(deps.config);
  requireMail(deps);
  const db = deps.database.db;
  const now = deps.clock.now();
  const id = encodeHexLowerCase(deps.random.bytes(16));
  const expiresAt = new Date(now.getTime() + OP_LOGIN_TTL_MS);
  const user = await findLiveUserByEmail(db, email);
  if (user && !user.disabled && isStaffRole(user.role) && user.email && resendWait(await lastSentAt(db, user.id), now) === 0) {
    const code = generateCode(deps.random);
    await db.insert(opLoginRequests).values({
      id,
      userId: user.id,
      email: user.email,
      clientIp: client.clientIp,
      userAgent: cutUtf8(client.userAgent ?? '', USER_AGENT_MAX_BYTES),
      status: 'pending',
      codeHash: codeHash(id, code),
      createdAt: now,
      expiresAt,
    });
    try {
      await mailCode(deps, user.email, code, requestId);
    } catch (err) {
      await db.delete(opLoginRequests).where(eq(opLoginRequests.id, id));
      throw err;
    }
  }
  return { requestId: id, expiresAt };
}

/** When the account was last sent an operator-login code. */
async function lastSentAt(db: Queryable, userId: string): Promise<Date | undefined> {
  const [row] = await db
    .select({ createdAt: opLoginRequests.createdAt })
    .from(opLoginRequests)
    .where(eq(opLoginRequests.userId, userId))
    .orderBy(desc(opLoginRequests.createdAt))
    .limit(1);
  return row?.createdAt;
}

/** The browser's poll: true only for a live approved request; anything else, known or not, reads false. */
export async function isApproved(deps: Pick<Deps, 'config' | 'clock' | 'database'>, id: string): Promise<boolean> {
  requireLocalAuth(deps.config);
  const [row] = await deps.database.db.select({ id: opLoginRequests.id }).from(opLoginRequests).where(live(id, 'approved', deps.clock.now())).limit(1);
  return row !== undefined;
}

export const invalidOpLogin = () => new DomainError('op_login_invalid', 'This operator login could not be completed; start the sign-in again.');

/**
 * Spends an approved request with its mailed code and returns the staff account to sign in. The
 * attempt is counted before the code is compared (five per request), and the spend is one
 * conditional update, so a request signs in once however many finishes race.
 */
async function spendOpLogin(db: Queryable, id: string, code: string, now: Date): Promise<{ userId: string; role: string }> {
  const [counted] = await db
    .update(opLoginRequests)
    .set({ attempts: sql`${opLoginRequests.attempts} + 1` })
    .where(and(live(id, 'approved', now), lt(opLoginRequests.attempts, CODE_MAX_ATTEMPTS)))
    .returning({ codeHash: opLoginRequests.codeHash });
  if (!counted || !codeMatches(code, counted.codeHash, (typed) => codeHash(id, typed))) throw invalidOpLogin();
  const [spent] = await db
    .update(opLoginRequests)
    .set({ status: 'consumed', consumedAt: now })
    .where(live(id, 'approved', now))
    .returning({ userId: opLoginRequests.userId });
  if (!spent) throw invalidOpLogin();
  const user = await findUserById(db, spent.userId);
  if (!user || user.disabled || user.deletedAt || !isStaffRole(user.role)) throw invalidOpLogin();
  return { userId: spent.userId, role: user.role };
}

/**
 * Finishes an approved operator login with the mailed code: a staff session, on the operator
 * console only (checked before the code, so a finish on the wrong host spends no attempt).
 */
export async function finishOpLogin(
  deps: Pick<Deps, 'config' | 'clock' | 'random' | 'database'>,
  input: { requestId: string; code: string },
  client: SignInClient,
): Promise<SignedIn> {
  requireLocalAuth(deps.config);
  if (!isConsoleHost(deps.config, client.host)) {
    throw new DomainError('forbidden', 'An operator login finishes on the operator console only.');
  }
  const db = deps.database.db;
  const user = await spendOpLogin(db, input.requestId.trim(), input.code.trim(), deps.clock.now());
  const session = await mintSession(deps, db, { ...client, userId: user.userId, method: 'operator_login' });
  return { userId: user.userId, role: user.role, token: session.token };
}

/** The in-game approver: a UUID linked to a live admin or owner, else 403 not_admin. */
async function requireApprover(db: Queryable, approverUuid: string) {
  const approver = await findUserByMcUuid(db, approverUuid);
  if (!approver || approver.disabled || !isStaffRole(approver.role)) {
    throw new DomainError('not_admin', 'Only a linked administrator may approve an operator login.');
  }
  return approver;
}

const requestView = {
  request_id: opLoginRequests.id,
  username: usernameOf(opLoginRequests.userId),
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
    .where(and(eq(opLoginRequests.status, 'pending'), gt(opLoginRequests.expiresAt, now)))
    .orderBy(asc(opLoginRequests.createdAt), asc(opLoginRequests.id));
}

async function pendingRequest(db: Queryable, id: string, now: Date) {
  const [row] = await db.select(requestView).from(opLoginRequests).where(live(id, 'pending', now));
  if (!row) throw new DomainError('op_login_not_found', 'No pending operator login has this id.');
  return row;
}

export type PendingRequest = Awaited<ReturnType<typeof pendingRequest>>;

/** A pending request, for a linked admin about to approve it: the approver is checked first, so a player who types the command learns nothing. */
export async function requestForApprover(deps: Pick<Deps, 'clock' | 'database'>, id: string, approverUuid: string): Promise<PendingRequest> {
  await requireApprover(deps.database.db, approverUuid);
  return pendingRequest(deps.database.db, id, deps.clock.now());
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

/** Deletes the requests that expired before `cutoff` (the identity housekeeping round runs it). */
export async function purgeOpLoginRequests(db: Queryable, cutoff: Date): Promise<void> {
  await db.delete(opLoginRequests).where(lt(opLoginRequests.expiresAt, cutoff));
}
