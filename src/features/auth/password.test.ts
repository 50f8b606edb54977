import { describe, expect, it } from 'vitest';
import { DUMMY_PASSWORD_HASH, hashPassword, passwordBytes, SCRYPT_PARAMS, verifyPassword } from './password.js';

describe('password hashes', () => {
  it('hashes with scrypt at the OWASP parameters and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horsE', hash)).toBe(false);
    expect(hash).not.toBe(await hashPassword('correct horse'));
  });

  it('never matches a malformed stored value', async () => {
    for (const stored of ['', 'bcrypt$x', 'scrypt$0$8$1$AAAA$AAAA', 'scrypt$131072$8$1$AAAA$']) {
      expect(await verifyPassword('x', stored)).toBe(false);
    }
  });

  it('keeps the dummy hash at the current parameters, so unknown users cost the same', () => {
    expect(DUMMY_PASSWORD_HASH.split('$').slice(1, 4).map(Number)).toEqual([SCRYPT_PARAMS.N, SCRYPT_PARAMS.r, SCRYPT_PARAMS.p]);
  });

  it('measures passwords in UTF-8 bytes', () => {
    expect(passwordBytes('abcdefgh')).toBe(8);
    expect(passwordBytes('é'.repeat(36))).toBe(72);
  });
});
