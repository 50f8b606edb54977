import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokensEqual } from './secrets.js';

describe('tokensEqual', () => {
  it('is string equality for any presented and expected token', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.string({ minLength: 1, maxLength: 80 }), (presented, expected) => {
        expect(tokensEqual(presented, expected)).toBe(presented === expected);
        expect(tokensEqual(expected, expected)).toBe(true);
      }),
    );
  });

  it('compares only the span it is given, as equality of that span', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 }), fc.string({ maxLength: 20 }), fc.string({ minLength: 1, maxLength: 40 }), (before, presented, after, expected) => {
        const header = before + presented + after;
        const from = before.length;
        expect(tokensEqual(header, expected, from, from + presented.length)).toBe(presented === expected);
      }),
    );
  });

  it('refuses prefixes, extensions, repetitions of the expected token and an empty expected token', () => {
    const expected = 'p-token-aaaaaaaa';
    for (const presented of ['', 'p-token-aaaaaaa', `${expected}p`, expected + expected, 'P-TOKEN-AAAAAAAA']) {
      expect(tokensEqual(presented, expected), presented).toBe(false);
    }
    expect(tokensEqual('', '')).toBe(false);
  });
});
