import { lockForTransaction } from '../../coordination/index.js';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Queryable, Transaction } from '../../db/client.js';
import { linkCodes } from '../../db/schema/linking.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { findUserByMcUuid, insertLink, invalidCode, linkOf, requireReauth } from '../accounts/index.js';
import { generateLinkCode, LINK_CODE_TTL_MS, linkCodeHash, normalizeLinkCode } from './codes.js';
import { authSourceOf, type AuthSource } from './uuid.js';

export interface MintedLinkCode {
  code: string;
  expiresAt: Date;
}

/** Mints a code for a verified UUID; `authSource` defaults to what the UUID's version says. */
export async function mintLinkCode(
  deps: Pick<Deps, 'clock' | 'random' | 'database'>,
  mcUuid: string,
  authSource: AuthSource | undefined,
): Promise<MintedLinkCode> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + LINK_CODE_TTL_MS);
  // A collision with a live code (40 bits of code space) is retried, never overwritten.
  for (;;) {
    const code = generateLinkCode(deps.random);
    const rows = await deps.database.db
      .insert(linkCodes)
      .values({ codeHash: linkCodeHash(code), mcUuid, authSource: authSource ?? authSourceOf(mcUuid), createdAt: now, expiresAt })
      .onConflictDoNothing()
      .returning({ codeHash: linkCodes.codeHash });
    if (rows.length > 0) return { code, expiresAt };
  }
}

/** Linked to a live account: a UUID whose account was deleted reads unlinked. */
export async function isUuidLinked(db: Queryable, mcUuid: string): Promise<boolean> {
  return (await findUserByMcUuid(db, mcUuid)) !== undefined;
}

/** Serialises every change to one UUID's link, on any replica, until the transaction ends. */
export async function lockUuid(tx: Transaction, mcUuid: string): Promise<void> {
  await lockForTransaction(tx, { scope: 'link', mcUuid });
}

/**
 * Spends a typed code inside the caller's transaction: one conditional update, so of concurrent
 * redeems exactly one gets the row back. A refusal later in the transaction rolls the spend back.
 */
export async function spendLinkCode(tx: Transaction, typed: string, now: Date): Promise<{ mcUuid: string; authSource: AuthSource }> {
  const code = normalizeLinkCode(typed);
  if (!code) throw invalidCode();
  const [spent] = await tx
    .update(linkCodes)
    .set({ usedAt: now })
    .where(and(eq(linkCodes.codeHash, linkCodeHash(code)), isNull(linkCodes.usedAt), gt(linkCodes.expiresAt, now)))
    .returning({ mcUuid: linkCodes.mcUuid, authSource: linkCodes.authSource });
  if (!spent) throw invalidCode();
  await lockUuid(tx, spent.mcUuid);
  return spent;
}

/**
 * Links a code's UUID to a signed-in account (web verify). A link adds a way into the account
 * (contract section 5, rule 5): guarded by reauth. 409 when another account holds the UUID.
 */
export async function verifyLinkCode(deps: Pick<Deps, 'clock' | 'database'>, session: SessionContext, typed: string) {
  await requireReauth(deps, session);
  const userId = session.userId;
  const now = deps.clock.now();
  return deps.database.db.transaction(async (tx) => {
    const { mcUuid, authSource } = await spendLinkCode(tx, typed, now);
    const existing = await linkOf(tx, mcUuid);
    if (existing && existing.userId !== userId) {
      throw new DomainError('already_linked', 'That Minecraft account is already linked to another account.');
    }
    if (!existing) await insertLink(tx, userId, mcUuid, authSource, now);
    return { mcUuid, authSource: existing?.authSource ?? authSource };
  });
}
