import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;
const AAGUID = Buffer.from('0f0e0d0c0b0a09080706050403020100', 'hex');

interface Held {
  id: Buffer;
  privateKey: KeyObject;
  cose: Uint8Array;
  counter: number;
  userHandle: string;
}

export interface CeremonyOverrides {
  /** The origin the browser would put in the client data (default: the authenticator's). */
  origin?: string;
  /** The challenge signed instead of the options' one. */
  challenge?: string;
  /** The counter to report instead of the next one. */
  counter?: number;
  /** Which held credential answers (default: the first allowed, or the first held). */
  credentialId?: string;
}

/**
 * A CTAP2-style authenticator in software for unit tests: ES256 keys, `none` attestation, a
 * signature counter, resident credentials. It produces exactly what a browser posts (the
 * panel's shapes), so the service's verification runs for real, with nothing stubbed.
 */
export class SoftAuthenticator {
  readonly held: Held[] = [];

  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {}

  /** navigator.credentials.create() for the creation options (their JSON form). */
  register(options: { challenge: string; user: { id: string } }, overrides: CeremonyOverrides = {}) {
    // With `credentialId`, a held credential is offered again (as a cloned authenticator would).
    const held = this.held.find((h) => b64url(h.id) === overrides.credentialId) ?? this.#newCredential(options.user.id);
    const { id, cose } = held;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([this.#authDataHead(FLAG_UP | FLAG_UV | FLAG_AT, overrides.counter ?? 0), AAGUID, idLength, id, cose]);
    const clientDataJSON = this.#clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
    };
  }

  /** navigator.credentials.get() for the request options (their JSON form). */
  assert(options: { challenge: string; allowCredentials?: Array<{ id: string }> }, overrides: CeremonyOverrides = {}) {
    const wanted = overrides.credentialId ?? options.allowCredentials?.[0]?.id;
    const held = wanted === undefined ? this.held[0] : this.held.find((h) => b64url(h.id) === wanted);
    if (!held) throw new Error('the authenticator holds no such credential');
    held.counter = overrides.counter ?? held.counter + 1;
    const authData = this.#authDataHead(FLAG_UP | FLAG_UV, held.counter);
    const clientDataJSON = this.#clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides.origin);
    const signer = createSign('SHA256');
    signer.update(Buffer.concat([authData, sha256(clientDataJSON)]));
    return {
      id: b64url(held.id),
      rawId: b64url(held.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signer.sign(held.privateKey)),
        userHandle: held.userHandle,
      },
    };
  }

  #newCredential(userHandle: string): Held {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const held: Held = { id: randomBytes(32), privateKey, cose, counter: 0, userHandle };
    this.held.push(held);
    return held;
  }

  #authDataHead(flags: number, counter: number): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags]), count]);
  }

  #clientData(type: string, challenge: string, origin?: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: origin ?? this.origin, crossOrigin: false }));
  }
}
