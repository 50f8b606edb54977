import type { AuthenticatorTransport } from '@simplewebauthn/server';
import { decodeBase64urlIgnorePadding, encodeBase64urlNoPadding } from '@oslojs/encoding';
import type { Queryable } from '../../db/client.js';
import type { RandomSource } from '../../lib/random.js';
import { CEREMONY_TTL_MS } from './ceremonies.js';
import { advanceCounter, type CredentialRow, type NewCredential } from './credentials.js';
import type { RelyingParty } from './relying-party.js';
import type { Assertion, Attestation } from './schema.js';

/**
 * The WebAuthn library, loaded at the first ceremony: with its ASN.1 and X.509 dependencies it is
 * about 200 modules and 25 MiB of resident memory that a service whose users sign in otherwise
 * never needs (docs/notes/issue-29-speed.md).
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (library ??= import('@simplewebauthn/server'));

const TRANSPORTS = new Set<string>(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const UNKNOWN_AAGUID = '00000000-0000-0000-0000-000000000000';

/** The WebAuthn user handle of an account: the 16 bytes of its uuid (what a discoverable sign-in reveals). */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(Buffer.from(userId.replace(/-/g, ''), 'hex'));
}

/** Options in their JSON form, handed to the browser as they are. */
export type WebAuthnOptions = Record<string, unknown> & { challenge: string };

const challengeOf = (random: RandomSource) => Uint8Array.from(random.bytes(32));
const descriptorOf = (c: CredentialRow) => ({ id: c.credentialId, transports: c.transports as AuthenticatorTransport[] });

/** COSE algorithm ids a passkey may use: EdDSA (-8), ES256 (-7), RS256 (-257). */
const SUPPORTED_ALGORITHMS = [-8, -7, -257];

/** Creation options for a new passkey of the account; its existing ones are excluded. */
export async function registrationOptions(
  rp: RelyingParty,
  random: RandomSource,
  user: { id: string; username: string; email: string | null },
  existing: CredentialRow[],
): Promise<WebAuthnOptions> {
  return (await (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: userHandleOf(user.id),
    userName: user.email ?? user.username,
    userDisplayName: user.username,
    challenge: challengeOf(random),
    timeout: CEREMONY_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map(descriptorOf),
    // A resident key lets the passkey sign in with no address typed (the discoverable door).
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    // EdDSA, ES256, RS256, as before @simplewebauthn 14: its default puts ML-DSA-44 first where
    // the runtime has it (Node 24), whose signatures outgrow the assertion schema's limit.
    supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
  })) as unknown as WebAuthnOptions;
}

/** Request options: over the given credentials, or with an empty list for a discoverable sign-in. */
export async function requestOptions(rp: RelyingParty, random: RandomSource, allow: CredentialRow[]): Promise<WebAuthnOptions> {
  return (await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allow.map(descriptorOf),
    challenge: challengeOf(random),
    timeout: CEREMONY_TTL_MS,
    userVerification: 'required',
  })) as unknown as WebAuthnOptions;
}

/** The challenge an assertion's client data names, or undefined when it cannot be read. */
export function signedChallenge(assertion: Assertion): string | undefined {
  try {
    const data = JSON.parse(Buffer.from(decodeBase64urlIgnorePadding(assertion.response.clientDataJSON)).toString('utf8')) as unknown;
    const challenge = (data as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === 'string' ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies a registration against the ceremony's challenge and the relying party; the credential
 * to store, or undefined for any failure (the library's reason is the caller's to log).
 */
export async function verifyAttestation(
  rp: RelyingParty,
  attestation: Attestation,
  expectedChallenge: string,
  onFailure: (reason: string) => void,
): Promise<Omit<NewCredential, 'userId' | 'name' | 'createdAt'> | undefined> {
  const { verifyRegistrationResponse } = await webauthn();
  try {
    const result = await verifyRegistrationResponse({
      response: { ...attestation, clientExtensionResults: attestation.clientExtensionResults ?? {} } as never,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    });
    if (!result.verified) return void onFailure('not verified');
    const info = result.registrationInfo;
    return {
      credentialId: info.credential.id,
      publicKey: encodeBase64urlNoPadding(info.credential.publicKey),
      counter: info.credential.counter,
      transports: (attestation.response.transports ?? []).filter((t) => TRANSPORTS.has(t)),
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid === UNKNOWN_AAGUID ? null : info.aaguid,
    };
  } catch (err) {
    return void onFailure((err as Error).message);
  }
}

/**
 * Verifies an assertion by a stored credential against the ceremony's challenge and the relying
 * party, then records it (counter, last use). False for any failure, including a counter that did
 * not move forward (a cloned authenticator, or a second use of one signature).
 */
export async function verifyAssertion(
  db: Queryable,
  rp: RelyingParty,
  input: { assertion: Assertion; expectedChallenge: string; credential: CredentialRow; now: Date },
  onFailure: (reason: string) => void,
): Promise<boolean> {
  const { assertion, credential } = input;
  const { verifyAuthenticationResponse } = await webauthn();
  try {
    const result = await verifyAuthenticationResponse({
      response: {
        ...assertion,
        response: { ...assertion.response, userHandle: assertion.response.userHandle ?? undefined },
        authenticatorAttachment: assertion.authenticatorAttachment ?? undefined,
        clientExtensionResults: assertion.clientExtensionResults ?? {},
      } as never,
      expectedChallenge: input.expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: credential.credentialId,
        publicKey: Uint8Array.from(decodeBase64urlIgnorePadding(credential.publicKey)),
        counter: credential.counter,
      },
      requireUserVerification: true,
    });
    if (!result.verified) return (onFailure('not verified'), false);
    if (!(await advanceCounter(db, credential.id, result.authenticationInfo.newCounter, input.now))) {
      return (onFailure('counter did not move forward'), false);
    }
    return true;
  } catch (err) {
    return (onFailure((err as Error).message), false);
  }
}
