import { hash, timingSafeEqual } from 'node:crypto';
import { sha256 } from '@oslojs/crypto/sha2';
import { constantTimeEqual } from '@oslojs/crypto/subtle';
import { encodeBase64urlNoPadding, encodeHexLowerCase } from '@oslojs/encoding';
import type { RandomSource } from './random.js';

const encoder = new TextEncoder();

export function sha256Bytes(value: string | Uint8Array): Uint8Array {
  return sha256(typeof value === 'string' ? encoder.encode(value) : value);
}

export function sha256Hex(value: string | Uint8Array): string {
  return encodeHexLowerCase(sha256Bytes(value));
}

/**
 * Compares two secrets in time that depends only on their lengths' digests: both sides are hashed
 * first so that neither the content nor the length of the expected value leaks through timing.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  return constantTimeEqual(sha256Bytes(presented), sha256Bytes(expected));
}

/**
 * sha-256 by Node's native one-shot hash: for the per-request token check, where the pure-JS
 * hash and a Hash object per request each cost more than the comparison itself.
 */
export function sha256Digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/** Constant-time equality of two digests (false, at once, for different lengths: digests never are). */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** An opaque token of `byteLength` random bytes, base64url without padding. */
export function randomToken(random: RandomSource, byteLength = 32): string {
  return encodeBase64urlNoPadding(random.bytes(byteLength));
}
