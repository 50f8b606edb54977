import { describe, expect, it } from 'vitest';
import { bearerToken, identifyCaller } from './service-auth.js';

describe('reading a Bearer token', () => {
  it('reads the forms callers send and nothing else', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc  ')).toBe('abc');
    expect(bearerToken('Bearer abc def')).toBeUndefined();
    expect(bearerToken('Bearer ')).toBeUndefined();
    expect(bearerToken('Bearerabc')).toBeUndefined();
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('identifies a caller only by a whole token', () => {
    const tokens = { proxy: 'p'.repeat(24), ops: 'o'.repeat(24) };
    expect(identifyCaller(tokens, 'o'.repeat(24))).toBe('ops');
    expect(identifyCaller(tokens, 'o'.repeat(23))).toBeUndefined();
    expect(identifyCaller(tokens, `${'o'.repeat(24)}x`)).toBeUndefined();
  });
});
