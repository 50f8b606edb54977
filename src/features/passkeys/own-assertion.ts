import { DomainError } from '../../lib/errors.js';
import type { Deps } from '../../deps.js';
import type { PasskeyPurpose } from '../../db/schema/passkeys.js';
import { replaceCeremony, takeCeremony } from './ceremonies.js';
import { findCredential, listCredentials } from './credentials.js';
import { requireRelyingParty } from './relying-party.js';
import type { Assertion } from './schema.js';
import { requestOptions, verifyAssertion } from './webauthn.js';

type OwnDeps = Pick<Deps, 'config' | 'clock' | 'random' | 'database' | 'log'>;

/** One step-up ceremony of a signed-in account: its purpose, and whose it is (e.g. the session). */
export interface OwnCeremony {
  purpose: PasskeyPurpose;
  subject: string;
  userId: string;
}

export const invalidAssertion = () => new DomainError('passkey_login_invalid', 'The passkey could not be verified; begin again.');

/**
 * Starts an assertion over the account's own passkeys (reauth; the migration confirm uses it
 * too): the request options for the browser. 400 no_passkey when the account has none.
 */
export async function beginOwnAssertion(deps: OwnDeps, ceremony: OwnCeremony) {
  const rp = requireRelyingParty(deps.config);
  const db = deps.database.db;
  const credentials = await listCredentials(db, ceremony.userId);
  if (credentials.length === 0) throw new DomainError('no_passkey', 'This account has no passkey.');
  const options = await requestOptions(rp, deps.random, credentials);
  await replaceCeremony(db, { ...ceremony, challenge: options.challenge, now: deps.clock.now() });
  return options;
}

/**
 * Finishes it: resolves when one of the account's own passkeys signed the ceremony's challenge,
 * else 400 passkey_login_invalid. The ceremony is spent either way.
 */
export async function finishOwnAssertion(deps: OwnDeps, ceremony: OwnCeremony, assertion: Assertion, requestId?: string): Promise<void> {
  const rp = requireRelyingParty(deps.config);
  const db = deps.database.db;
  const now = deps.clock.now();
  const live = await takeCeremony(db, { purpose: ceremony.purpose, subject: ceremony.subject, now });
  const credential = live && (await findCredential(db, assertion.id));
  const refused = (reason: string) => deps.log.info({ request_id: requestId, purpose: ceremony.purpose, reason }, 'passkey assertion refused');
  if (!live || !credential || credential.userId !== ceremony.userId) {
    refused(live ? 'not a credential of this account' : 'no live ceremony');
    throw invalidAssertion();
  }
  if (!(await verifyAssertion(db, rp, { assertion, expectedChallenge: live.challenge, credential, now }, refused))) throw invalidAssertion();
}
