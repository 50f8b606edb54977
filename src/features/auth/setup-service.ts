import type { Transaction } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { findUserById, insertUser, mintSession, setInSetup, revokeUserSessions, uniqueViolation, type SignInClient } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { requireLocalAuth } from '../doors/index.js';
import { setupState, type SetupState } from './setup-state.js';
import { ownerExists, spendSetupToken } from './setup-token.js';
import type { AccountsParts } from '../accounts/index.js';

/** The owner's username when the redeem names none (api-extensions). */
const DEFAULT_OWNER_USERNAME = 'owner';

const invalidToken = () => new DomainError('setup_token_invalid', 'This setup token is invalid, expired or already used.');

/**
 * A recovery token (owner-recovery.ts): the same owner account, signed in anew. Its other
 * sessions end and it is in setup lockdown until it has a new way in; nothing else changes.
 */
async function recoverOwner(
  deps: Pick<Deps, 'config' | 'clock' | 'random'>,
  tx: Transaction,
  ownerId: string,
  input: { username?: string; email?: string },
  client: SignInClient,
  now: Date,
  requestId: string | undefined,
) {
  if (input.username !== undefined || input.email !== undefined) {
    // Thrown inside the transaction, so the token stays unspent for a corrected request.
    throw new DomainError('bad_request', 'A recovery token signs in as the existing owner: send only the token, then set the e-mail address.');
  }
  const current = await findUserById(tx, ownerId);
  // Demoted, deleted or disabled since the token was minted: the token is for nobody now.
  if (!current || current.role !== 'owner' || current.deletedAt !== null || current.disabled) throw invalidToken();
  const owner = await setInSetup(tx, ownerId, true, now);
  const revoked = await revokeUserSessions(tx, ownerId, now);
  await writeAudit(tx, { at: now, actor: ownerId, action: 'setup.recover', target: ownerId, detail: { sessions_revoked: revoked }, requestId });
  const session = await mintSession(deps, tx, { ...client, userId: ownerId, method: 'setup_token' });
  return { owner: owner!, token: session.token };
}

/**
 * First run: spends the setup token and creates the owner, signed in (method `setup_token`) and in
 * setup lockdown until a passkey or a verified address gives the account a durable way in. A
 * recovery token signs in as the existing owner instead (`npm run recover-owner`).
 */
export async function redeemSetupToken(
  deps: Pick<Deps & AccountsParts, 'config' | 'database' | 'clock' | 'random' | 'passkeys'>,
  input: { token: string; username?: string; email?: string },
  client: SignInClient,
  requestId?: string,
): Promise<{ state: SetupState; token: string }> {
  requireLocalAuth(deps.config);
  const now = deps.clock.now();
  try {
    const { owner, token } = await deps.database.db.transaction(async (tx) => {
      const spent = await spendSetupToken(tx, input.token.trim(), now);
      if (!spent) throw invalidToken();
      if (spent.ownerId !== null) return recoverOwner(deps, tx, spent.ownerId, input, client, now, requestId);
      // A token outliving the first owner (minted before a racing redeem) is as spent as any.
      if (await ownerExists(tx)) throw invalidToken();
      const created = await insertUser(tx, {
          username: input.username ?? DEFAULT_OWNER_USERNAME,
          email: input.email?.toLowerCase() ?? null,
          role: 'owner',
          inSetup: true,
          createdAt: now,
          updatedAt: now,
      });
      await writeAudit(tx, { at: now, actor: created!.id, action: 'setup.redeem', target: created!.id, requestId });
      const session = await mintSession(deps, tx, { ...client, userId: created!.id, method: 'setup_token' });
      return { owner: created!, token: session.token };
    });
    return { state: await setupState(deps, deps.database.db, owner), token };
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw new DomainError('conflict', 'That username or e-mail address is taken.');
    throw err;
  }
}

/** What first-run setup remains for the signed-in account. */
export async function setupStatus(deps: Pick<Deps & AccountsParts, 'database' | 'passkeys'>, session: SessionContext): Promise<SetupState> {
  const user = await findUserById(deps.database.db, session.userId);
  if (!user) throw new DomainError('unauthorized');
  return setupState(deps, deps.database.db, user);
}
