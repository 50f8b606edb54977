import { createHash } from 'node:crypto';
import { constantTimeEqual } from '@oslojs/crypto/subtle';
import { encodeBase64urlNoPadding } from '@oslojs/encoding';
import type { RandomSource } from './random.js';

// The runtime's SHA-256 (Node and Bun alike): every signed-in request hashes its session token,
// and the runtime's is about four times faster than a JavaScript one (2.4 against 9.8 µs).
export function sha256Bytes(value: string | Uint8Array): Uint8Array {
  return createHash('sha256').update(value).digest();
}

export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * Compares two secrets in time that depends only on their lengths' digests: both sides are hashed
 * first so that neither the content nor the length of the expected value leaks through timing.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  return constantTimeEqual(sha256Bytes(presented), sha256Bytes(expected));
}

/**
 * Whether a presented token (`presented`, or its part from `from` to `to`, so that a header need not
 * be copied) is the expected one, in time that depends only on the presented token's length (the
 * caller's own input): every character is compared, the expected token is read cyclically without
 * a branch so its length never shapes the loop, and nothing returns early. For the per-request
 * service-token check, where hashing both sides cost a twentieth of the proxy's by-host throughput.
 */
export function tokensEqual(presented: string, expected: string, from = 0, to = presented.length): boolean {
  const length = expected.length;
  if (length === 0) return false;
  let diff = (to - from) ^ length;
  let j = 0;
  for (let i = from; i < to; i++) {
    diff |= presented.charCodeAt(i) ^ expected.charCodeAt(j);
    j = (j + 1) & -Number(j + 1 < length); // j + 1, or 0 past the end of the expected token
  }
  return diff === 0;
}

/** An opaque token of `byteLength` random bytes, base64url without padding. */
export function randomToken(random: RandomSource, byteLength = 32): string {
  return encodeBase64urlNoPadding(random.bytes(byteLength));
}
