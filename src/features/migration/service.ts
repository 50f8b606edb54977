import { lockForTransaction } from '../../coordination/index.js';
import { and, eq, gt, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Queryable, Transaction } from '../../db/client.js';
import { users } from '../../db/schema/accounts.js';
import { accountMigrations } from '../../db/schema/migration.js';
import { serverClaims } from '../../db/schema/servers.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { secretsEqual, sha256Hex } from '../../lib/secrets.js';
import { writeAudit } from '../audit/index.js';
import { findUserByMcUuid } from '../accounts/index.js';
import { generateLinkCode, LINK_CODE_TTL_MS, normalizeLinkCode } from '../linking/index.js';

/** How long a step-up lets the session that gave it issue the code. */
export const CONFIRM_WINDOW_MS = 10 * 60 * 1000;
export const MIGRATE_CODE_TTL_MS = LINK_CODE_TTL_MS;

const UNFINISHED = ['initiated', 'confirmed', 'code_issued'] as const;
export type Stage = (typeof UNFINISHED)[number];
export type MigrationRow = typeof accountMigrations.$inferSelect;

export const migrateCodeHash = (code: string) => sha256Hex(`migrate-code:${code}`);
export const confirmCodeHash = (migrationId: string, code: string) => sha256Hex(`migrate-confirm:${migrationId}:${code}`);

async function lockSource(tx: Transaction, userId: string): Promise<void> {
  await lockForTransaction(tx, { scope: 'migrate', userId });
}

/**
 * The in-game start: the account linked to a verified UUID enters migration (`initiated`),
 * superseding an earlier unfinished attempt of the same source. 404 not_linked, 409
 * account_retired (the source already handed its servers over, or is disabled).
 */
export async function startMigration(deps: Pick<Deps, 'clock' | 'database'>, mcUuid: string, requestId?: string): Promise<void> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const source = await findUserByMcUuid(db, mcUuid);
  if (!source) throw new DomainError('not_linked', 'This Minecraft account is not linked to an account.');
  await db.transaction(async (tx) => {
    await lockSource(tx, source.id);
    const [redeemed] = await tx
      .select({ id: accountMigrations.id })
      .from(accountMigrations)
      .where(and(eq(accountMigrations.sourceUserId, source.id), eq(accountMigrations.state, 'redeemed')))
      .limit(1);
    if (redeemed || source.disabled) throw new DomainError('account_retired', 'The linked account can no longer start a migration.');
    await tx
      .update(accountMigrations)
      .set({ state: 'superseded', finishedAt: now })
      .where(and(eq(accountMigrations.sourceUserId, source.id), inArray(accountMigrations.state, [...UNFINISHED])));
    await tx.insert(accountMigrations).values({ sourceUserId: source.id, state: 'initiated', createdAt: now });
    await writeAudit(tx, { at: now, actor: `mc:${mcUuid}`, action: 'account.migrate.start', target: source.id, requestId });
  });
}

export async function liveMigration(db: Queryable, sourceUserId: string): Promise<MigrationRow | undefined> {
  const [row] = await db
    .select()
    .from(accountMigrations)
    .where(and(eq(accountMigrations.sourceUserId, sourceUserId), inArray(accountMigrations.state, [...UNFINISHED])))
    .limit(1);
  return row;
}

/**
 * Where the caller's session stands: a confirmation made by another session or older than the
 * window, and a code that lapsed unspent, put it back at the step-up.
 */
export function stageOf(m: MigrationRow, sessionHash: string, now: Date): Stage {
  if (m.state === 'confirmed') {
    const fresh = m.confirmedAt !== null && now.getTime() < m.confirmedAt.getTime() + CONFIRM_WINDOW_MS;
    if (m.confirmSession !== sessionHash || !fresh) return 'initiated';
  }
  if (m.state === 'code_issued' && (m.codeExpiresAt === null || now >= m.codeExpiresAt)) return 'initiated';
  return m.state as Stage;
}

/** The caller's live migration, which must stand at the step-up for this session. */
export async function requireAtStepUp(db: Queryable, userId: string, sessionHash: string, now: Date): Promise<MigrationRow> {
  const m = await liveMigration(db, userId);
  if (!m) throw new DomainError('no_migration', 'No migration is in progress; start one in game with /felis migrate.');
  if (stageOf(m, sessionHash, now) !== 'initiated') throw new DomainError('already_confirmed', 'This migration has already been confirmed.');
  return m;
}

/**
 * Checks a step-up code: the attempt is counted before the comparison (five per code), and a
 * match moves the migration to `confirmed` for this session.
 */
export async function confirmByCode(db: Queryable, m: MigrationRow, code: string, sessionHash: string, now: Date, maxAttempts: number): Promise<void> {
  const [counted] = await db
    .update(accountMigrations)
    .set({ confirmAttempts: sql`${accountMigrations.confirmAttempts} + 1` })
    .where(and(eq(accountMigrations.id, m.id), inArray(accountMigrations.state, [...UNFINISHED]), gt(accountMigrations.confirmCodeExpiresAt, now), lt(accountMigrations.confirmAttempts, maxAttempts)))
    .returning({ codeHash: accountMigrations.confirmCodeHash });
  if (!counted) {
    const [current] = await db.select().from(accountMigrations).where(eq(accountMigrations.id, m.id));
    const locked = current?.confirmCodeExpiresAt != null && now < current.confirmCodeExpiresAt && current.confirmAttempts >= maxAttempts;
    throw locked ? new DomainError('too_many_attempts', 'Too many wrong codes; ask for a new one.') : invalidCode();
  }
  if (!/^\d{6}$/.test(code) || !counted.codeHash || !secretsEqual(confirmCodeHash(m.id, code), counted.codeHash)) throw invalidCode();
  if (!(await markConfirmed(db, m, 'email_otp', sessionHash, now, eq(accountMigrations.confirmCodeHash, counted.codeHash)))) throw invalidCode();
}

/**
 * Moves the migration to `confirmed` for this session (a code issued before is void), when it is
 * still the live one and `also` holds; false when it was not.
 */
export async function markConfirmed(db: Queryable, m: MigrationRow, factor: 'email_otp' | 'passkey', sessionHash: string, now: Date, also?: SQL): Promise<boolean> {
  const [confirmed] = await db
    .update(accountMigrations)
    .set({ state: 'confirmed', confirmFactor: factor, confirmSession: sessionHash, confirmedAt: now, confirmCodeHash: null, targetUserId: null, codeHash: null, codeExpiresAt: null })
    .where(and(eq(accountMigrations.id, m.id), inArray(accountMigrations.state, [...UNFINISHED]), also))
    .returning({ id: accountMigrations.id });
  return confirmed !== undefined;
}

export const invalidCode = () => new DomainError('invalid_code', 'The code is wrong, expired or already used.');

/** Names the target and mints its one-time code; only the session that gave the step-up may. */
export async function issueMigrationCode(
  deps: Pick<Deps, 'clock' | 'random' | 'database'>,
  input: { userId: string; sessionHash: string; targetUserId: string; requestId?: string },
): Promise<{ code: string; expiresAt: Date }> {
  const db = deps.database.db;
  const now = deps.clock.now();
  if (input.targetUserId === input.userId) throw new DomainError('invalid_target', 'The target account must differ from the source.');
  const m = await liveMigration(db, input.userId);
  if (!m) throw new DomainError('no_migration', 'No migration is in progress; start one in game with /felis migrate.');
  if (stageOf(m, input.sessionHash, now) !== 'confirmed') throw notConfirmed();
  const [target] = await db.select({ disabled: users.disabled, deletedAt: users.deletedAt }).from(users).where(eq(users.id, input.targetUserId));
  if (!target) throw new DomainError('target_not_found', 'No account has that id.');
  if (target.disabled || target.deletedAt) throw new DomainError('target_unavailable', 'The target account is not available.');
  const code = generateLinkCode(deps.random);
  const expiresAt = new Date(now.getTime() + MIGRATE_CODE_TTL_MS);
  const [issued] = await db
    .update(accountMigrations)
    .set({ state: 'code_issued', targetUserId: input.targetUserId, codeHash: migrateCodeHash(code), codeExpiresAt: expiresAt })
    .where(and(eq(accountMigrations.id, m.id), eq(accountMigrations.state, 'confirmed'), eq(accountMigrations.confirmSession, input.sessionHash)))
    .returning({ id: accountMigrations.id });
  if (!issued) throw notConfirmed();
  await writeAudit(db, { at: now, actor: input.userId, action: 'account.migrate.code_issued', target: input.targetUserId, requestId: input.requestId });
  return { code, expiresAt };
}

const notConfirmed = () => new DomainError('not_confirmed', 'Confirm the migration in this browser first; a confirmation lasts 10 minutes.');

/**
 * The target spends the code: in one transaction the migration is redeemed (the source is
 * retired) and the source's servers move to the caller. The UUID link and web credentials stay.
 */
export async function redeemMigration(
  deps: Pick<Deps, 'clock' | 'database'>,
  input: { userId: string; typed: string; requestId?: string },
): Promise<string[]> {
  const code = normalizeLinkCode(input.typed);
  if (!code) throw invalidCode();
  const now = deps.clock.now();
  return deps.database.db.transaction(async (tx) => {
    const [redeemed] = await tx
      .update(accountMigrations)
      .set({ state: 'redeemed', finishedAt: now })
      .where(
        and(
          eq(accountMigrations.codeHash, migrateCodeHash(code)),
          eq(accountMigrations.state, 'code_issued'),
          gt(accountMigrations.codeExpiresAt, now),
          eq(accountMigrations.targetUserId, input.userId),
        ),
      )
      .returning({ sourceUserId: accountMigrations.sourceUserId });
    if (!redeemed) throw invalidCode();
    const moved = await tx
      .update(serverClaims)
      .set({ userId: input.userId })
      .where(eq(serverClaims.userId, redeemed.sourceUserId))
      .returning({ name: serverClaims.serverName });
    const servers = moved.map((r) => r.name).sort();
    await writeAudit(tx, { at: now, actor: input.userId, action: 'account.migrate.redeemed', target: redeemed.sourceUserId, detail: { servers }, requestId: input.requestId });
    return servers;
  });
}
