import { eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { Queryable } from '../../db/client.js';
import { sessions, users, type SignInMethod } from '../../db/schema/accounts.js';
import { passkeyCredentials, reauthProofs } from '../../db/schema/passkeys.js';
import type { Deps } from '../../deps.js';
import type { AppEnv, SignedInEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionContext } from '../../http/session.js';
import { isStaffRole } from '../accounts/authenticator.js';
import { relyingPartyOf } from '../passkeys/relying-party.js';

/** A proof lets the session make guarded changes this long (contract section 8). */
export const REAUTH_WINDOW_MS = 5 * 60 * 1000;

/**
 * Sign-ins that prove a factor (contract section 5, rule 5). A bind code proves only the in-game
 * identity, and a password is not one of the passwordless doors: neither counts.
 */
const PROVING_SIGN_INS: ReadonlySet<SignInMethod> = new Set<SignInMethod>(['passkey', 'email_otp', 'operator_login', 'setup_token']);

/** Best first. `sign_in`: sign out and in again through a proving door (staff, whose e-mail code alone is no factor). */
export type ReauthFactor = 'passkey' | 'email' | 'sign_in';
export type ProofFactor = 'passkey' | 'email';

export interface ReauthStatus {
  /** A guarded change would be refused until the session gives a proof. */
  needed: boolean;
  /** When the current proof stops counting; absent without one, or with nothing to guard. */
  until?: string;
  factors: ReauthFactor[];
}

type ReauthDeps = Pick<Deps, 'config' | 'clock' | 'database' | 'mail'>;

/** Where the session stands: whether the account has a way in to guard, and how fresh its proof is. */
export async function reauthStatus(deps: ReauthDeps, session: SessionContext, db: Queryable = deps.database.db): Promise<ReauthStatus> {
  const [row] = await db
    .select({
      method: sessions.method,
      signedInAt: sessions.createdAt,
      provedAt: reauthProofs.provedAt,
      role: users.role,
      email: users.email,
      emailVerified: users.emailVerified,
      hasPasskey: sql<boolean>`exists (select 1 from ${passkeyCredentials} where ${passkeyCredentials.userId} = ${users.id})`,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .leftJoin(reauthProofs, eq(reauthProofs.sessionHash, sessions.tokenHash))
    .where(eq(sessions.tokenHash, session.tokenHash))
    .limit(1);
  // The session was authenticated a moment ago; without its row there is nothing to prove with.
  if (!row) return { needed: true, factors: [] };
  const factors: ReauthFactor[] = [];
  if (row.hasPasskey && relyingPartyOf(deps.config)) factors.push('passkey');
  const verifiedEmail = row.emailVerified && row.email !== null;
  if (verifiedEmail && deps.mail) factors.push(isStaffRole(row.role) ? 'sign_in' : 'email');
  // Nothing to guard yet: the session is the account's only way in.
  if (!row.hasPasskey && !verifiedEmail) return { needed: false, factors };
  const proofs = [row.provedAt, PROVING_SIGN_INS.has(row.method) ? row.signedInAt : null].filter((d): d is Date => d !== null);
  const latest = Math.max(...proofs.map((d) => d.getTime()));
  const until = latest + REAUTH_WINDOW_MS;
  if (proofs.length > 0 && until > deps.clock.now().getTime()) return { needed: false, until: new Date(until).toISOString(), factors };
  return { needed: true, factors };
}

/**
 * The guard of every change that adds, removes or moves a way into the account: one call at the
 * top of the handler, `await requireReauth(c)`. 403 reauth_required without a fresh proof.
 */
export async function requireReauth(c: Context<SignedInEnv>, db?: Queryable): Promise<void> {
  const session = c.var.session;
  if (!session) throw new DomainError('unauthorized', 'A signed-in session is required.');
  const status = await reauthStatus(c.var.deps, session, db);
  if (status.needed) {
    throw new DomainError('reauth_required', 'Confirm it is you first: this change needs a passkey or an e-mail code from the last 5 minutes.');
  }
}

/** Records a proof given in the session; returns when it stops counting. */
export async function recordProof(db: Queryable, sessionHash: string, factor: ProofFactor, now: Date): Promise<Date> {
  await db
    .insert(reauthProofs)
    .values({ sessionHash, provedAt: now, factor })
    .onConflictDoUpdate({ target: reauthProofs.sessionHash, set: { provedAt: now, factor } });
  return new Date(now.getTime() + REAUTH_WINDOW_MS);
}
