import { lockForTransaction } from '../../coordination/index.js';
import type { Deps } from '../../deps.js';
import type { Clock } from '../../lib/clock.js';
import type { RandomSource } from '../../lib/random.js';
import { randomToken } from '../../lib/secrets.js';
import { writeAudit } from '../audit/index.js';
import { storeSetupToken } from './setup-token.js';
import { liveOwners } from '../accounts/index.js';

/**
 * Lost-owner recovery (`npm run recover-owner`, run where the database is). Whoever can run it
 * holds the database already, so the command itself is the proof; what it must not do is lose
 * anything or act unseen. It mints a one-time token bound to an existing owner: redeemed at
 * `POST /api/v1/auth/setup/redeem` it signs in as that same account (its servers, links and
 * history untouched), ends the account's other sessions (a lost laptop keeps none) and puts it
 * in setup lockdown until it has a new way in (a verified e-mail or a passkey). Minting and
 * redeeming each leave an audit row. With no owner yet, it mints the first-run token instead.
 */
export type OwnerRecovery =
  | { kind: 'recovery'; token: string; expiresAt: Date; owner: { id: string; username: string } }
  | { kind: 'first_run'; token: string; expiresAt: Date }
  | { kind: 'choose'; owners: string[] }
  | { kind: 'unknown_owner'; owners: string[] }
  | { kind: 'disabled'; owner: string; owners: string[] };

export interface RecoveryRequest {
  /** The owner to recover; needed only when there are several. */
  username?: string;
  /** Who ran the command, for the audit row (`cli:<os user>`). */
  actor: string;
  /** Where it ran (host name), for the audit row. */
  ranOn: string;
}

export async function mintOwnerRecoveryToken(
  deps: { clock: Clock; random: RandomSource; database: Deps['database'] },
  request: RecoveryRequest,
): Promise<OwnerRecovery> {
  return deps.database.db.transaction(async (tx) => {
    await lockForTransaction(tx, 'setupToken');
    const now = deps.clock.now();
    const owners = await liveOwners(tx);
    const names = owners.map((o) => o.username);
    if (owners.length === 0) {
      const token = randomToken(deps.random, 24);
      return { kind: 'first_run', token, expiresAt: await storeSetupToken(tx, token, now) };
    }
    const wanted = request.username?.toLowerCase();
    const owner = wanted === undefined ? (owners.length === 1 ? owners[0] : undefined) : owners.find((o) => o.username.toLowerCase() === wanted);
    if (!owner) return wanted === undefined ? { kind: 'choose', owners: names } : { kind: 'unknown_owner', owners: names };
    // Another owner disabled this account on purpose; the last enabled owner cannot be disabled,
    // so there is always an enabled one to recover instead.
    if (owner.disabled) return { kind: 'disabled', owner: owner.username, owners: names };
    const token = randomToken(deps.random, 24);
    const expiresAt = await storeSetupToken(tx, token, now, owner.id);
    await writeAudit(tx, {
      at: now,
      actor: request.actor,
      action: 'setup.recovery_token',
      target: owner.id,
      detail: { username: owner.username, expires_at: expiresAt.toISOString(), ran_on: request.ranOn },
    });
    return { kind: 'recovery', token, expiresAt, owner: { id: owner.id, username: owner.username } };
  });
}
