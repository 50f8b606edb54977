import { lockForTransaction } from '../../coordination/index.js';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { setupTokens } from '../../db/schema/auth.js';
import type { Deps } from '../../deps.js';
import type { Clock } from '../../lib/clock.js';
import type { RandomSource } from '../../lib/random.js';
import { randomToken, sha256Hex } from '../../lib/secrets.js';
import { consoleCurl, leaveSetupCommands, redeemCommand, SESSION_VAR } from './next-steps.js';
import { liveOwners } from '../accounts/index.js';

export const SETUP_TOKEN_TTL_MS = 60 * 60 * 1000;
export async function ownerExists(db: Queryable): Promise<boolean> {
  return (await liveOwners(db)).length > 0;
}

/**
 * Stores an owner token (hashed) as the only live one; returns its expiry. With `ownerId` it is a
 * recovery token that signs in as that owner; without, a first-run token that creates the owner.
 */
export async function storeSetupToken(db: Queryable, token: string, now: Date, ownerId?: string): Promise<Date> {
  const expiresAt = new Date(now.getTime() + SETUP_TOKEN_TTL_MS);
  await db.delete(setupTokens).where(isNull(setupTokens.usedAt));
  await db.insert(setupTokens).values({ tokenHash: sha256Hex(token), createdAt: now, expiresAt, ownerId: ownerId ?? null });
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
        .where(and(eq(setupTokens.tokenHash, sha256Hex(preset)), isNull(setupTokens.usedAt), isNull(setupTokens.ownerId), gt(setupTokens.expiresAt, now)));
      if (existing) return { kind: 'preset', expiresAt: existing.expiresAt };
      return { kind: 'preset', expiresAt: await storeSetupToken(tx, preset, now) };
    }
    const [live] = await tx
      .select()
      .from(setupTokens)
      .where(and(isNull(setupTokens.usedAt), isNull(setupTokens.ownerId), gt(setupTokens.expiresAt, now)))
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

/**
 * Spends a live owner token (each works once): undefined when it was not live, else whom it is
 * for (`ownerId` null: a first-run token).
 */
export async function spendSetupToken(db: Queryable, token: string, now: Date): Promise<{ ownerId: string | null } | undefined> {
  const [row] = await db
    .update(setupTokens)
    .set({ usedAt: now })
    .where(and(eq(setupTokens.tokenHash, sha256Hex(token)), isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, now)))
    .returning({ ownerId: setupTokens.ownerId });
  return row;
}

/** The owner still in first-run lockdown (no verified e-mail, no passkey), if any. */
async function ownerInSetup(db: Queryable): Promise<{ username: string } | undefined> {
  const owner = (await liveOwners(db)).find((o) => o.inSetup);
  return owner && { username: owner.username };
}

const LOST_SESSION = 'A lost session or a lost way in: `npm run recover-owner` (where the database is) mints a one-time token that signs in as the owner.';

/**
 * Start-up hook, once the faces listen: while there is no owner, or the owner is still in setup
 * lockdown, logs what to do next (the token itself only when minted now) and returns the same as
 * commands to paste, for main.ts to print on a terminal. `externalPort` is the port listened on.
 */
export async function setupOnStart(
  deps: Pick<Deps, 'clock' | 'random' | 'database' | 'log' | 'config'>,
  listening: { externalPort: number },
): Promise<string | undefined> {
  const { log } = deps;
  const where = { ...deps.config, externalPort: listening.externalPort };
  const result = await ensureSetupToken(deps, deps.config.setupToken);
  let heading: string;
  let token: string | undefined;
  switch (result.kind) {
    case 'minted':
      log.warn(
        { setup_token: result.token, expires_at: result.expiresAt.toISOString(), next: redeemCommand(where, result.token) },
        'first run: no owner yet. Become the owner with POST /api/v1/auth/setup/redeem {token, username?, email?} on the console host within one hour (this token is shown once; `npm run setup-token` mints a new one)',
      );
      heading = `no owner yet. Become the owner (this token works once, until ${result.expiresAt.toISOString()}):`;
      token = result.token;
      break;
    case 'live':
      log.info({ expires_at: result.expiresAt.toISOString() }, 'first run: a setup token is live; `npm run setup-token` mints a new one');
      heading = `no owner yet. The setup token shown at the first start works until ${result.expiresAt.toISOString()} (lost it? stop the service and run \`npm run setup-token\`):`;
      token = '<setup token>';
      break;
    case 'preset':
      log.info({ expires_at: result.expiresAt.toISOString() }, 'first run: the SETUP_TOKEN from the environment claims the owner account');
      heading = 'no owner yet. Become the owner with the SETUP_TOKEN of the environment:';
      token = '$SETUP_TOKEN';
      break;
    case 'owner_exists': {
      const owner = await ownerInSetup(deps.database.db);
      if (!owner) return undefined;
      log.warn({ owner: owner.username }, 'the owner is still in setup lockdown: verify an e-mail address or add a passkey (`npm run recover-owner` if the session is lost)');
      heading = `the owner "${owner.username}" is still in setup lockdown. With the session from the redeem ($${SESSION_VAR}):`;
      break;
    }
  }
  if (!consoleCurl(where)) {
    log.warn('CONSOLE_HOST is unset: the owner could administer nothing (the admin tier is served only there); set CONSOLE_HOST and restart');
    return undefined;
  }
  const lines = [`felis: ${heading}`, ''];
  if (token !== undefined) lines.push(`  ${redeemCommand(where, token)}`, '');
  if (deps.config.mailTransport === 'none') {
    lines.push('Leave setup lockdown by adding a passkey in a browser on the console host (MAIL_TRANSPORT=none: no e-mail code can be sent).');
  } else {
    lines.push(
      `Leave setup lockdown with a verified e-mail address (the code is ${deps.config.mailTransport === 'log' ? 'written to this log' : 'mailed'}), or add a passkey in a browser:`,
      '',
      ...leaveSetupCommands(where).map((c) => `  ${c}`),
    );
  }
  lines.push('', token === undefined ? LOST_SESSION : 'README.md, "First steps", goes on to a running server.', '');
  return lines.join('\n');
}
