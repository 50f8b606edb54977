import type { Transaction } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { insertLink, insertUserUnlessTaken, isStaffRole, linkOf, mintSession, type SignInClient } from '../accounts/index.js';
import { refusePlayerOnConsole, requireLocalAuth } from '../doors/index.js';
import { spendLinkCode } from './service.js';
import type { AuthSource } from './uuid.js';

/**
 * A player account for a UUID seen for the first time: role user, named after the UUID (the
 * player may rename it later). The longer name is only needed if the short one is taken.
 */
async function createPlayerAccount(tx: Transaction, mcUuid: string, now: Date): Promise<string> {
  const hex = mcUuid.replaceAll('-', '');
  for (const username of [`mc_${hex.slice(0, 12)}`, `mc_${hex.slice(0, 29)}`]) {
    const row = await insertUserUnlessTaken(tx, { username, role: 'user', createdAt: now, updatedAt: now });
    if (row) return row.id;
  }
  throw new Error(`no free username for ${mcUuid}`);
}

export interface BoundPlayer {
  userId: string;
  mcUuid: string;
  authSource: AuthSource;
  /** The token of the session the bind opened, for its cookie. */
  token: string;
}

/**
 * The bind-code sign-in: the code alone proves the in-game identity, so it finds or creates the
 * player's account, links it and signs it in (method `bind`, which is no reauth proof). Staff are
 * refused: this door never yields a staff session, nor does it open on the operator console. Every
 * refusal rolls the spend back.
 */
export async function bindSignIn(deps: Pick<Deps, 'config' | 'clock' | 'random' | 'database'>, typed: string, client: SignInClient): Promise<BoundPlayer> {
  requireLocalAuth(deps.config);
  refusePlayerOnConsole(deps.config, client.host, 'user');
  const now = deps.clock.now();
  return deps.database.db.transaction(async (tx) => {
    const { mcUuid, authSource } = await spendLinkCode(tx, typed, now);
    const existing = await linkOf(tx, mcUuid);
    let userId: string;
    if (existing) {
      if (isStaffRole(existing.role)) {
        throw new DomainError('staff_account', 'That Minecraft account belongs to staff; sign in at the operator console.');
      }
      if (existing.disabled || existing.deletedAt) throw new DomainError('account_disabled', 'The account linked to this Minecraft account is disabled.');
      userId = existing.userId;
    } else {
      userId = await createPlayerAccount(tx, mcUuid, now);
      await insertLink(tx, userId, mcUuid, authSource, now);
    }
    const session = await mintSession(deps, tx, { ...client, userId, method: 'bind' });
    return { userId, mcUuid, authSource: existing?.authSource ?? authSource, token: session.token };
  });
}
