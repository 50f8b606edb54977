import { and, eq, gt, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { accountMigrations } from '../../db/schema/migration.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { sha256Hex } from '../../lib/secrets.js';
import { findUserById, CODE_MAX_ATTEMPTS, CODE_TTL_MS, codeMatches, generateCode, invalidCode, mailCode, requireMail, resendWait } from '../accounts/index.js';
import { beginOwnAssertion, finishOwnAssertion, userHasPasskey, type Assertion, type OwnCeremony } from '../passkeys/index.js';
import { liveMigration, stageOf, UNFINISHED, type MigrationRow } from './service.js';

/**
 * The step-up that confirms a migration in this browser: a passkey of the account's, or without
 * one a code mailed to its verified address. A confirmation belongs to the session that gave it.
 */

const confirmCodeHash = (migrationId: string, code: string) => sha256Hex(`migrate-confirm:${migrationId}:${code}`);

/** The step-up ceremony belongs to the session that began it, apart from its reauth ceremony. */
const ceremonyOf = (session: SessionContext): OwnCeremony => ({ purpose: 'reauth', subject: `migrate:${session.tokenHash}`, userId: session.userId });

/** The caller's live migration, which must stand at the step-up for this session. */
async function requireAtStepUp(db: Queryable, session: SessionContext, now: Date): Promise<MigrationRow> {
  const m = await liveMigration(db, session.userId);
  if (!m) throw new DomainError('no_migration', 'No migration is in progress; start one in game with /felis migrate.');
  if (stageOf(m, session.tokenHash, now) !== 'initiated') throw new DomainError('already_confirmed', 'This migration has already been confirmed.');
  return m;
}

/**
 * Moves the migration to `confirmed` for this session (a code issued before is void), when it is
 * still the live one and `also` holds; false when it was not.
 */
async function markConfirmed(db: Queryable, m: MigrationRow, factor: 'email_otp' | 'passkey', sessionHash: string, now: Date, also?: SQL): Promise<boolean> {
  const [confirmed] = await db
    .update(accountMigrations)
    .set({ state: 'confirmed', confirmFactor: factor, confirmSession: sessionHash, confirmedAt: now, confirmCodeHash: null, targetUserId: null, codeHash: null, codeExpiresAt: null })
    .where(and(eq(accountMigrations.id, m.id), inArray(accountMigrations.state, [...UNFINISHED]), also))
    .returning({ id: accountMigrations.id });
  return confirmed !== undefined;
}

/**
 * Mails a step-up code to the account's verified address; returns when it expires. A strong
 * factor is not downgraded to e-mail for a transfer of servers: an account with a passkey uses it.
 */
export async function sendConfirmCode(
  deps: Pick<Deps, 'clock' | 'random' | 'database' | 'mail' | 'log'>,
  session: SessionContext,
  requestId?: string,
): Promise<Date> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const m = await requireAtStepUp(db, session, now);
  const user = await findUserById(db, session.userId);
  if (await userHasPasskey(db, session.userId)) throw new DomainError('passkey_required', 'This account has a passkey; confirm the migration with it.');
  if (!user?.email || !user.emailVerified) throw new DomainError('no_step_up_factor', 'No verified address on this account to confirm the migration.');
  requireMail(deps);
  const sentAt = m.confirmCodeExpiresAt ? new Date(m.confirmCodeExpiresAt.getTime() - CODE_TTL_MS) : undefined;
  const wait = resendWait(sentAt, now);
  if (wait > 0) throw new DomainError('otp_resend_cooldown', 'A code was sent moments ago.', { retryAfterSeconds: wait });
  const code = generateCode(deps.random);
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
  await db
    .update(accountMigrations)
    .set({ confirmCodeHash: confirmCodeHash(m.id, code), confirmCodeExpiresAt: expiresAt, confirmAttempts: 0 })
    .where(eq(accountMigrations.id, m.id));
  await mailCode(deps, user.email, code, requestId);
  return expiresAt;
}

/**
 * Confirms with the mailed code: the attempt is counted before the comparison (CODE_MAX_ATTEMPTS
 * per code), and a match moves the migration to `confirmed` for this session.
 */
export async function confirmWithCode(deps: Pick<Deps, 'clock' | 'database'>, session: SessionContext, typed: string): Promise<void> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const m = await requireAtStepUp(db, session, now);
  const code = typed.trim();
  const [counted] = await db
    .update(accountMigrations)
    .set({ confirmAttempts: sql`${accountMigrations.confirmAttempts} + 1` })
    .where(and(eq(accountMigrations.id, m.id), inArray(accountMigrations.state, [...UNFINISHED]), gt(accountMigrations.confirmCodeExpiresAt, now), lt(accountMigrations.confirmAttempts, CODE_MAX_ATTEMPTS)))
    .returning({ codeHash: accountMigrations.confirmCodeHash });
  if (!counted) {
    const [current] = await db.select().from(accountMigrations).where(eq(accountMigrations.id, m.id));
    const locked = current?.confirmCodeExpiresAt != null && now < current.confirmCodeExpiresAt && current.confirmAttempts >= CODE_MAX_ATTEMPTS;
    throw locked ? new DomainError('too_many_attempts', 'Too many wrong codes; ask for a new one.') : invalidCode();
  }
  if (!codeMatches(code, counted.codeHash, (c) => confirmCodeHash(m.id, c))) throw invalidCode();
  if (!(await markConfirmed(db, m, 'email_otp', session.tokenHash, now, eq(accountMigrations.confirmCodeHash, counted.codeHash!)))) throw invalidCode();
}

/** Starts the step-up with one of the account's passkeys: the request options. */
export async function beginPasskeyConfirm(deps: Pick<Deps, 'config' | 'clock' | 'random' | 'database' | 'log'>, session: SessionContext) {
  await requireAtStepUp(deps.database.db, session, deps.clock.now());
  return beginOwnAssertion(deps, ceremonyOf(session));
}

/** Confirms with the assertion. */
export async function confirmWithPasskey(
  deps: Pick<Deps, 'config' | 'clock' | 'random' | 'database' | 'log'>,
  session: SessionContext,
  assertion: Assertion,
  requestId?: string,
): Promise<void> {
  const db = deps.database.db;
  const m = await requireAtStepUp(db, session, deps.clock.now());
  await finishOwnAssertion(deps, ceremonyOf(session), assertion, requestId);
  if (!(await markConfirmed(db, m, 'passkey', session.tokenHash, deps.clock.now()))) {
    throw new DomainError('no_migration', 'The migration ended while the passkey was asked.');
  }
}
