import { createHash, timingSafeEqual, type Hash } from 'node:crypto';
import { DomainError } from '../lib/errors.js';

/**
 * `Content-Digest` (RFC 9530) as uploads carry it: a dictionary of algorithm → `:base64:`. Only
 * `sha-256` is checked; another algorithm beside it is ignored, a header without it is refused
 * (400 bad_request): a digest we cannot verify must not pass for a verified upload.
 */
export function expectedSha256(header: string): Buffer {
  for (const member of header.split(',')) {
    const match = /^\s*([a-z0-9-]+)\s*=\s*:([A-Za-z0-9+/]*={0,2}):\s*$/.exec(member);
    if (!match) throw new DomainError('bad_request', 'Content-Digest is malformed (expected sha-256=:<base64>:).');
    if (match[1] !== 'sha-256') continue;
    const digest = Buffer.from(match[2]!, 'base64');
    if (digest.length !== 32) throw new DomainError('bad_request', 'Content-Digest sha-256 must be 32 bytes.');
    return digest;
  }
  throw new DomainError('bad_request', 'Content-Digest must carry sha-256.');
}

/** The `Content-Digest` value of some bytes (for clients, tests and answers). */
export function contentDigestOf(bytes: Uint8Array | string): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

/**
 * The reusable step: feed every byte, then `finish()` gives the sha-256 (hex) or throws 400
 * `digest_mismatch` when an expected digest was given and differs. Whoever stores the bytes must
 * commit them only after `finish()` returned.
 */
export class DigestCheck {
  private readonly hash: Hash = createHash('sha256');
  private digest: Buffer | undefined;

  constructor(private readonly expected: Buffer | undefined) {}

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
  }

  finish(): string {
    this.digest ??= this.hash.digest();
    if (this.expected !== undefined && !timingSafeEqual(this.digest, this.expected)) {
      throw new DomainError('digest_mismatch', 'The body does not match its Content-Digest; nothing was stored.');
    }
    return this.digest.toString('hex');
  }
}
