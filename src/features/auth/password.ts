import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashes with node:crypto scrypt at OWASP's parameters (N=2^17, r=8, p=1), stored as
 * `scrypt$N$r$p$salt$hash` (base64) so that the parameters can be raised without a migration.
 */
export const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const { N, r: R, p: P } = SCRYPT_PARAMS;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** scrypt needs 128·N·r bytes; node refuses above maxmem, whose default (32 MiB) is too small. */
const maxmemFor = (n: number, r: number) => 128 * n * r + 16 * 1024 * 1024;

export const PASSWORD_MIN_BYTES = 8;
export const PASSWORD_MAX_BYTES = 72;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await scrypt(password, salt, KEY_LENGTH, { N, r: R, p: P, maxmem: maxmemFor(N, R) });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * A hash at the same parameters of a random password that was thrown away, checked for unknown
 * users so that they take as long as known ones (a constant, so the first such login is not slower).
 * Regenerate it when N, r or p change (a test checks that they match).
 */
export const DUMMY_PASSWORD_HASH =
  'scrypt$131072$8$1$gsSsyX/WxiEuZPil/bbwzQ==$IbKKkYtty3KXyrZ95+tgXMOhvH8gN1TnnFyONhK0Q48=';

/** Whether `password` matches `stored`; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![n, r, p].every((v) => Number.isSafeInteger(v) && v > 0)) return false;
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (expected.length === 0) return false;
  const key = await scrypt(password, salt, expected.length, { N: n, r, p, maxmem: maxmemFor(n, r) });
  return timingSafeEqual(key, expected);
}

export const passwordBytes = (password: string): number => Buffer.byteLength(password.normalize('NFC'), 'utf8');
