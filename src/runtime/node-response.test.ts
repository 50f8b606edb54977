import { describe, expect, it } from 'vitest';
import { withAnswerHeaders } from './node-response.js';

describe('the answer headers merged into each writeHead (AnswerResponse)', () => {
  const own = { 'Content-Type': 'text/plain', 'X-Frame-Options': 'SAMEORIGIN', 'x-request-id': 'forged', 'Strict-Transport-Security': 'max-age=1' };

  it("adds the contract headers once and keeps the answer's own, never in place of ours", () => {
    const plain = withAnswerHeaders(own, 'id-1', false);
    expect(plain).toEqual({
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': "default-src 'none'",
      'X-Request-Id': 'id-1',
      'Content-Type': 'text/plain',
    });
  });

  it("adds HSTS behind the TLS edge and keeps an answer's own HSTS there", () => {
    expect(withAnswerHeaders({}, 'id-2', true)['Strict-Transport-Security']).toBe('max-age=63072000; includeSubDomains');
    const tls = withAnswerHeaders(own, 'id-2', true);
    expect(tls['Strict-Transport-Security']).toBe('max-age=1');
    expect(Object.keys(tls).filter((name) => name.toLowerCase() === 'strict-transport-security')).toHaveLength(1);
  });

  it("keeps a page's own Content-Security-Policy in place of the API's", () => {
    const page = withAnswerHeaders({ 'Content-Security-Policy': "default-src 'none'; script-src 'nonce-abc'" }, 'id-4', false);
    expect(page['Content-Security-Policy']).toBe("default-src 'none'; script-src 'nonce-abc'");
    expect(Object.keys(page).filter((name) => name.toLowerCase() === 'content-security-policy')).toHaveLength(1);
  });

  it('drops an own header named __proto__ without touching the prototype', () => {
    const merged = withAnswerHeaders(JSON.parse('{"__proto__":{"polluted":"1"},"X-Ok":"1"}') as never, 'id-3', false);
    expect(merged['X-Ok']).toBe('1');
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
  });
});
