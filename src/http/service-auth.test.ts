import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bearerTokenEnd, bearerTokenStart, identifyCaller } from './service-auth.js';

/** What the scanner must read: the token of RFC 6750's `Bearer` scheme, trailing white space allowed. */
const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/** The token the scanner reads; one with white space inside could match no configured token. */
function scanned(header: string): string | undefined {
  const start = bearerTokenStart(header);
  const token = start < 0 ? undefined : header.slice(start, bearerTokenEnd(header));
  return token !== undefined && !/\s/.test(token) ? token : undefined;
}

describe('reading a Bearer token in place', () => {
  it('takes exactly what the Bearer expression takes, for any header, as far as a token can match', () => {
    const piece = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', ' ', '  ', '\t', '\u00a0', '\u2003', 'tok', 'x.y-z_', '=', '\n');
    const header = fc.oneof(fc.string({ maxLength: 40 }), fc.array(piece, { maxLength: 8 }).map((parts) => parts.join('')));
    fc.assert(
      fc.property(header, (value) => {
        expect(scanned(value)).toBe(BEARER.exec(value)?.[1]);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads the forms callers send', () => {
    expect(scanned('Bearer abc')).toBe('abc');
    expect(scanned('bearer   abc  ')).toBe('abc');
    expect(scanned('Bearer abc def')).toBeUndefined();
    expect(scanned('Bearer ')).toBeUndefined();
    expect(scanned('Bearerabc')).toBeUndefined();
    expect(scanned('Basic abc')).toBeUndefined();
  });

  it('identifies a caller from the token inside the header, not a copy of it', () => {
    const tokens = { proxy: 'p'.repeat(24), ops: 'o'.repeat(24) };
    const header = `Bearer ${'o'.repeat(24)}  `;
    expect(identifyCaller(tokens, header, bearerTokenStart(header), bearerTokenEnd(header))).toBe('ops');
    expect(identifyCaller(tokens, header, bearerTokenStart(header), bearerTokenEnd(header) - 1)).toBeUndefined();
  });
});
