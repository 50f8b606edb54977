import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { findUserById, recordProof, setInSetup, requireReauth } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { replaceCeremony, takeCeremony } from './ceremonies.js';
import { deleteOwnCredential, insertCredential, listCredentials, toCredentialView } from './credentials.js';
import { requireRelyingParty } from './relying-party.js';
import type { Attestation } from './schema.js';
import { registrationOptions, verifyAttestation, type WebAuthnOptions } from './webauthn.js';

/** The signed-in account's own passkeys: adding one and removing one are guarded by reauth. */

type PasskeyDeps = Pick<Deps, 'config' | 'database' | 'clock' | 'random' | 'log'>;

/** Starts adding a passkey: the WebAuthn creation options (the account's passkeys are excluded). */
export async function beginRegistration(deps: PasskeyDeps, session: SessionContext): Promise<WebAuthnOptions> {
  const rp = requireRelyingParty(deps.config);
  await requireReauth(deps, session);
  const db = deps.database.db;
  const user = await findUserById(db, session.userId);
  if (!user) throw new DomainError('unauthorized');
  const options = await registrationOptions(rp, deps.random, user, await listCredentials(db, user.id));
  await replaceCeremony(db, { purpose: 'register', subject: user.id, userId: user.id, challenge: options.challenge, now: deps.clock.now() });
  return options;
}

/**
 * Binds the new passkey. It is a durable way in, so it ends first-run setup lockdown; registering
 * with user verification is itself a proof, as the original counts it.
 */
export async function finishRegistration(
  deps: PasskeyDeps,
  session: SessionContext,
  input: { name?: string; attestation: Attestation },
  requestId?: string,
) {
  const rp = requireRelyingParty(deps.config);
  await requireReauth(deps, session);
  const db = deps.database.db;
  const now = deps.clock.now();
  const live = await takeCeremony(db, { purpose: 'register', subject: session.userId, now });
  if (!live) throw new DomainError('passkey_challenge_invalid', 'No passkey registration is in progress; begin again.');
  const refused = (reason: string) => deps.log.info({ request_id: requestId, reason }, 'passkey attestation refused');
  const verified = await verifyAttestation(rp, input.attestation, live.challenge, refused);
  if (!verified) throw new DomainError('invalid_attestation', 'The passkey attestation could not be verified.');
  const row = await db.transaction(async (tx) => {
    const stored = await insertCredential(tx, { ...verified, userId: session.userId, name: input.name ?? '', createdAt: now });
    if (!stored) return undefined;
    await setInSetup(tx, session.userId, false, now);
    await recordProof(tx, session.tokenHash, 'passkey', now);
    await writeAudit(tx, { at: now, actor: session, action: 'passkey.register', target: stored.id, requestId });
    return stored;
  });
  if (!row) throw new DomainError('passkey_already_bound', 'This passkey is already bound to an account.');
  return toCredentialView(row);
}

/** The account's passkeys, newest first (never a public key). */
export async function ownPasskeys(deps: Pick<Deps, 'database'>, session: SessionContext) {
  return (await listCredentials(deps.database.db, session.userId)).map(toCredentialView);
}

/** Unbinds one of the account's passkeys; 404 when none of its passkeys has this id. */
export async function removeOwnPasskey(deps: Pick<Deps, 'database' | 'clock'>, session: SessionContext, id: string, requestId?: string): Promise<void> {
  await requireReauth(deps, session);
  const now = deps.clock.now();
  const removed = await deps.database.db.transaction(async (tx) => {
    if (!(await deleteOwnCredential(tx, session.userId, id))) return false;
    await writeAudit(tx, { at: now, actor: session, action: 'passkey.remove', target: id, requestId });
    return true;
  });
  if (!removed) throw new DomainError('not_found', 'No passkey of yours has this id.');
}
