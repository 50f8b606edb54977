import { lockForTransaction } from '../../coordination/index.js';
import { and, eq, gt, inArray } from 'drizzle-orm';
import type { Queryable, Transaction } from '../../db/client.js';
import { accountMigrations } from '../../db/schema/migration.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { sha256Hex } from '../../lib/secrets.js';
import { writeAudit } from '../audit/index.js';
import { findUserById, findUserByMcUuid, invalidCode } from '../accounts/index.js';
import { transferClaims } from '../servers/index.js';
import { generateLinkCode, LINK_CODE_TTL_MS, normalizeLinkCode } from '../linking/index.js';

/** How long a step-up lets the session that gave it issue the code. */
export const CONFIRM_WINDOW_MS = 10 * 60 * 1000;
export const MIGRATE_CODE_TTL_MS = LINK_CODE_TTL_MS;

export const UNFINISHED = ['initiated', 'confirmed', 'code_issued'] as const;
export type Stage = (typeof UNFINISHED)[number];
export type MigrationRow = typeof accountMigrations.$inferSelect;

const migrateCodeHash = (code: string) => sha256Hex(`migrate-code:${code}`);

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

/** The caller's migration, as far as this session stands in it. */
export async function migrationStatus(deps: Pick<Deps, 'clock' | 'database'>, session: SessionContext) {
  const now = deps.clock.now();
  const m = await liveMigration(deps.database.db, session.userId);
  if (!m) return { active: false };
  const state = stageOf(m, session.tokenHash, now);
  return {
    active: true,
    state,
    ...(state !== 'initiated' ? { confirm_factor: m.confirmFactor ?? undefined } : {}),
    ...(state === 'confirmed' ? { confirm_expires_at: new Date(m.confirmedAt!.getTime() + CONFIRM_WINDOW_MS).toISOString() } : {}),
    ...(state === 'code_issued' ? { target_user_id: m.targetUserId ?? undefined, code_expires_at: m.codeExpiresAt?.toISOString() } : {}),
  };
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

/** Names the target and mints its one-time code; only the session that gave the step-up may. */
export async function issueMigrationCode(
  deps: Pick<Deps, 'clock' | 'random' | 'database'>,
  session: SessionContext,
  targetUserId: string,
  requestId?: string,
): Promise<{ code: string; expiresAt: Date }> {
  const db = deps.database.db;
  const now = deps.clock.now();
  if (targetUserId === session.userId) throw new DomainError('invalid_target', 'The target account must differ from the source.');
  const m = await liveMigration(db, session.userId);
  if (!m) throw new DomainError('no_migration', 'No migration is in progress; start one in game with /felis migrate.');
  if (stageOf(m, session.tokenHash, now) !== 'confirmed') throw notConfirmed();
  const target = await findUserById(db, targetUserId);
  if (!target) throw new DomainError('target_not_found', 'No account has that id.');
  if (target.disabled || target.deletedAt) throw new DomainError('target_unavailable', 'The target account is not available.');
  const code = generateLinkCode(deps.random);
  const expiresAt = new Date(now.getTime() + MIGRATE_CODE_TTL_MS);
  const [issued] = await db
    .update(accountMigrations)
    .set({ state: 'code_issued', targetUserId, codeHash: migrateCodeHash(code), codeExpiresAt: expiresAt })
    .where(and(eq(accountMigrations.id, m.id), eq(accountMigrations.state, 'confirmed'), eq(accountMigrations.confirmSession, session.tokenHash)))
    .returning({ id: accountMigrations.id });
  if (!issued) throw notConfirmed();
  await writeAudit(db, { at: now, actor: session, action: 'account.migrate.code_issued', target: targetUserId, requestId });
  return { code, expiresAt };
}

const notConfirmed = () => new DomainError('not_confirmed', 'Confirm the migration in this browser first; a confirmation lasts 10 minutes.');

/**
 * The target spends the code: in one transaction the migration is redeemed (the source is
 * retired) and the source's servers move to the caller. The UUID link and web credentials stay.
 */
export async function redeemMigration(deps: Pick<Deps, 'clock' | 'database'>, session: SessionContext, typed: string, requestId?: string): Promise<string[]> {
  const code = normalizeLinkCode(typed);
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
          eq(accountMigrations.targetUserId, session.userId),
        ),
      )
      .returning({ sourceUserId: accountMigrations.sourceUserId });
    if (!redeemed) throw invalidCode();
    const servers = (await transferClaims(tx, redeemed.sourceUserId, session.userId)).sort();
    await writeAudit(tx, { at: now, actor: session, action: 'account.migrate.redeemed', target: redeemed.sourceUserId, detail: { servers }, requestId });
    return servers;
  });
}
