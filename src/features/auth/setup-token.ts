import { lockForTransaction } from '../../coordination/index.js';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { setupTokens, users } from '../../db/schema/accounts.js';
import type { Deps } from '../../deps.js';
import type { Clock } from '../../lib/clock.js';
import type { RandomSource } from '../../lib/random.js';
import { randomToken, sha256Hex } from '../../lib/secrets.js';

export const SETUP_TOKEN_TTL_MS = 60 * 60 * 1000;
export async function ownerExists(db: Queryable): Promise<boolean> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.role, 'owner'), isNull(users.deletedAt)))
    .limit(1);
  return row !== undefined;
}

/** Stores a setup token (hashed) as the only live one; returns it and its expiry. */
export async function storeSetupToken(db: Queryable, token: string, now: Date): Promise<Date> {
  const expiresAt = new Date(now.getTime() + SETUP_TOKEN_TTL_MS);
  await db.delete(setupTokens).where(isNull(setupTokens.usedAt));
  await db.insert(setupTokens).values({ tokenHash: sha256Hex(token), createdAt: now, expiresAt });
  return expiresAt;
}

export type EnsureResult =
  | { kind: 'owner_exists' }
  | { kind: 'live'; expiresAt: Date }
  | { kind: 'minted'; token: string; expiresAt: Date }
  | { kind: 'preset'; expiresAt: Date };

/**
 * First run: while no owner exists, make sure a setup token is live. `SETUP_TOKEN` presets it
 * (automated installs); otherwise a random one is minted and returned once to be logged. A token
 * that is already live is left alone, so a restart does not invalidate what the operator holds.
 */
export async function ensureSetupToken(
  deps: { clock: Clock; random: RandomSource; database: Deps['database'] },
  preset: string | undefined,
): Promise<EnsureResult> {
  return deps.database.db.transaction(async (tx) => {
    await lockForTransaction(tx, 'setupToken');
    if (await ownerExists(tx)) return { kind: 'owner_exists' };
    const now = deps.clock.now();
    if (preset !== undefined) {
      const [existing] = await tx
        .select()
        .from(setupTokens)
        .where(and(eq(setupTokens.tokenHash, sha256Hex(preset)), isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, now)));
      if (existing) return { kind: 'preset', expiresAt: existing.expiresAt };
      return { kind: 'preset', expiresAt: await storeSetupToken(tx, preset, now) };
    }
    const [live] = await tx
      .select()
      .from(setupTokens)
      .where(and(isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, now)))
      .limit(1);
    if (live) return { kind: 'live', expiresAt: live.expiresAt };
    const token = randomToken(deps.random, 24);
    return { kind: 'minted', token, expiresAt: await storeSetupToken(tx, token, now) };
  });
}

/** Mints a new setup token, replacing any live one (the `bin/` command); undefined when an owner exists. */
export async function mintSetupToken(
  deps: { clock: Clock; random: RandomSource; database: Deps['database'] },
): Promise<{ token: string; expiresAt: Date } | undefined> {
  return deps.database.db.transaction(async (tx) => {
    await lockForTransaction(tx, 'setupToken');
    if (await ownerExists(tx)) return undefined;
    const token = randomToken(deps.random, 24);
    return { token, expiresAt: await storeSetupToken(tx, token, deps.clock.now()) };
  });
}

/** Spends a live setup token; true when it was live (each token works once). */
export async function spendSetupToken(db: Queryable, token: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(setupTokens)
    .set({ usedAt: now })
    .where(and(eq(setupTokens.tokenHash, sha256Hex(token)), isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, now)))
    .returning({ tokenHash: setupTokens.tokenHash });
  return rows.length > 0;
}

/** Start-up hook: logs the minted token once, with what to do with it. */
export async function setupOnStart(deps: Pick<Deps, 'clock' | 'random' | 'database' | 'log' | 'config'>): Promise<void> {
  const result = await ensureSetupToken(deps, deps.config.setupToken);
  switch (result.kind) {
    case 'minted':
      deps.log.warn(
        { setup_token: result.token, expires_at: result.expiresAt.toISOString() },
        'first run: no owner yet. Become the owner with POST /api/v1/auth/setup/redeem {token, username?, email?} within one hour (this token is shown once; `npm run setup-token` mints a new one)',
      );
      break;
    case 'live':
      deps.log.info({ expires_at: result.expiresAt.toISOString() }, 'first run: a setup token is live; `npm run setup-token` mints a new one');
      break;
    case 'preset':
      deps.log.info({ expires_at: result.expiresAt.toISOString() }, 'first run: the SETUP_TOKEN from the environment claims the owner account');
      break;
    case 'owner_exists':
      break;
  }
}
