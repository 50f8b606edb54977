import { encodeBase64urlNoPadding } from '@oslojs/encoding';
import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { randomToken, sha256Hex } from '../../lib/secrets.js';
import { findLiveUserByEmail, findUserById, mintSession, type SignInClient } from '../accounts/index.js';
import { addressKey, refusePlayerOnConsole, requireLocalAuth, type SignedIn } from '../doors/index.js';
import { addDiscoverableCeremony, addLoginCeremony, takeCeremony } from './ceremonies.js';
import { findCredential, listCredentials, type CredentialRow } from './credentials.js';
import { invalidAssertion } from './own-assertion.js';
import { requireRelyingParty, type RelyingParty } from './relying-party.js';
import type { Assertion } from './schema.js';
import { requestOptions, signedChallenge, userHandleOf, verifyAssertion, type WebAuthnOptions } from './webauthn.js';

/** The passkey sign-in doors: the email-first one, and the discoverable one with no address typed. */

type LoginDeps = Pick<Deps, 'config' | 'database' | 'clock' | 'random' | 'log'>;

/** A passkey door is open while local sign-in is on and a relying party is configured (503 passkey_unavailable without). */
function openDoor(config: Config): RelyingParty {
  requireLocalAuth(config);
  return requireRelyingParty(config);
}

/** The same 400 for an unknown address and for one without a passkey. */
const noPasskey = () => new DomainError('no_passkey', 'No passkey is bound to this address; sign in another way.');

/**
 * The end of both sign-ins: the assertion verified against the ceremony, then a session. Every
 * refusal is the same 400, so that finish tells nothing about accounts or credentials.
 */
async function signInWith(
  deps: LoginDeps,
  rp: RelyingParty,
  input: { assertion: Assertion; challenge: string | undefined; credential: CredentialRow | undefined; userId: string | undefined; door: string },
  client: SignInClient,
  requestId?: string,
): Promise<SignedIn> {
  const db = deps.database.db;
  const refused = (reason: string) => deps.log.info({ request_id: requestId, door: input.door, reason }, 'passkey sign-in refused');
  const user = input.userId === undefined ? undefined : await findUserById(db, input.userId);
  if (input.challenge === undefined || !input.credential || !user || user.id !== input.credential.userId || user.disabled || user.deletedAt !== null) {
    refused(input.challenge === undefined ? 'no live ceremony' : 'no such credential or account');
    throw invalidAssertion();
  }
  const verified = await verifyAssertion(db, rp, { assertion: input.assertion, expectedChallenge: input.challenge, credential: input.credential, now: deps.clock.now() }, refused);
  if (!verified) throw invalidAssertion();
  refusePlayerOnConsole(deps.config, client.host, user.role);
  const session = await mintSession(deps, db, { ...client, userId: user.id, method: 'passkey' });
  return { userId: user.id, role: user.role, token: session.token };
}

/** Starts a sign-in for an address: request options over its passkeys (400 no_passkey without). */
export async function beginEmailSignIn(deps: LoginDeps, email: string): Promise<WebAuthnOptions> {
  const rp = openDoor(deps.config);
  const db = deps.database.db;
  const user = await findLiveUserByEmail(db, email);
  if (!user || user.disabled) throw noPasskey();
  const credentials = await listCredentials(db, user.id);
  if (credentials.length === 0) throw noPasskey();
  const options = await requestOptions(rp, deps.random, credentials);
  await addLoginCeremony(db, { subject: user.id, userId: user.id, challenge: options.challenge, now: deps.clock.now() });
  return options;
}

/** Signs in with the assertion; the ceremony is the one of the challenge the authenticator signed. */
export async function finishEmailSignIn(
  deps: LoginDeps,
  input: { email: string; assertion: Assertion },
  client: SignInClient,
  requestId?: string,
): Promise<SignedIn> {
  const rp = openDoor(deps.config);
  const db = deps.database.db;
  const user = await findLiveUserByEmail(db, input.email);
  const challenge = signedChallenge(input.assertion);
  const live = user && challenge !== undefined ? await takeCeremony(db, { purpose: 'login', subject: user.id, challenge, now: deps.clock.now() }) : undefined;
  const credential = live && (await findCredential(db, input.assertion.id));
  return signInWith(deps, rp, { assertion: input.assertion, challenge: live?.challenge, credential, userId: user?.id, door: 'passkey_login' }, client, requestId);
}

/**
 * Starts a sign-in with no address typed: request options with an empty allowCredentials, and the
 * login id to echo at finish. The door reads no body, but a JSON Content-Type (`declaredJson`) is
 * the cross-origin guard of the other doors. Live ceremonies are capped overall and per network.
 */
export async function beginDiscoverableSignIn(
  deps: LoginDeps,
  input: { clientIp: string; declaredJson: boolean },
): Promise<{ options: WebAuthnOptions; loginId: string }> {
  const rp = openDoor(deps.config);
  if (!input.declaredJson) throw new DomainError('unsupported_media_type');
  const loginId = randomToken(deps.random, 32);
  const options = await requestOptions(rp, deps.random, []);
  const added = await addDiscoverableCeremony(
    deps.database.db,
    // One network is an IPv4 host or an IPv6 /48.
    { subject: sha256Hex(loginId), challenge: options.challenge, network: addressKey(input.clientIp, 3), now: deps.clock.now() },
    { global: deps.config.webauthnChallengeCap, perNetwork: deps.config.webauthnChallengeCapPerNetwork },
  );
  if (!added) {
    throw new DomainError('too_many_challenges', 'Too many passkey sign-ins are in progress; try again in a few minutes.', { retryAfterSeconds: 60 });
  }
  return { options, loginId };
}

/** Signs in with the assertion; the account is the one the credential belongs to, and the authenticator must name it too. */
export async function finishDiscoverableSignIn(
  deps: LoginDeps,
  input: { loginId: string; assertion: Assertion },
  client: SignInClient,
  requestId?: string,
): Promise<SignedIn> {
  const rp = openDoor(deps.config);
  const db = deps.database.db;
  const live = await takeCeremony(db, { purpose: 'discoverable', subject: sha256Hex(input.loginId), now: deps.clock.now() });
  const credential = live && (await findCredential(db, input.assertion.id));
  const handle = input.assertion.response.userHandle;
  const named = credential && handle === encodeBase64urlNoPadding(userHandleOf(credential.userId)) ? credential.userId : undefined;
  return signInWith(deps, rp, { assertion: input.assertion, challenge: live?.challenge, credential, userId: named, door: 'passkey_discoverable' }, client, requestId);
}
