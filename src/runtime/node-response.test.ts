import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AnswerResponse } from './node-response.js';

/** The header block a response would send, parsed back (lower-cased name → every value). */
function sentHeaders(res: AnswerResponse): Map<string, string[]> {
  const block = (res as unknown as { _header: string })._header;
  const sent = new Map<string, string[]>();
  for (const line of block.split('\r\n').slice(1).filter(Boolean)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    sent.set(name, [...(sent.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return sent;
}

function response(requestId: string | undefined, viaTls = false): AnswerResponse {
  const res = new AnswerResponse(new IncomingMessage(new Socket()));
  res.requestId = requestId;
  res.viaTls = viaTls;
  return res;
}

describe('AnswerResponse', () => {
  const own = { 'Content-Type': 'text/plain', 'X-Frame-Options': 'SAMEORIGIN', 'X-Request-Id': 'forged', 'Strict-Transport-Security': 'max-age=1' };

  for (const path of ['the header table', 'a header set before the answer (merged object)']) {
    it(`adds the contract headers once and keeps the answer's own through ${path}`, () => {
      const plain = response('id-1');
      const tls = response('id-2', true);
      if (path !== 'the header table') for (const res of [plain, tls]) res.setHeader('X-Early', 'yes');
      plain.writeHead(200, own);
      tls.writeHead(201, 'Made', own);
      for (const [res, id] of [[plain, 'id-1'], [tls, 'id-2']] as const) {
        const sent = sentHeaders(res);
        expect(sent.get('x-frame-options')).toEqual(['DENY']);
        expect(sent.get('x-content-type-options')).toEqual(['nosniff']);
        expect(sent.get('referrer-policy')).toEqual(['no-referrer']);
        expect(sent.get('content-security-policy')).toEqual(["default-src 'none'"]);
        expect(sent.get('x-request-id')).toEqual([id]);
        expect(sent.get('content-type')).toEqual(['text/plain']);
        if (path !== 'the header table') expect(sent.get('x-early')).toEqual(['yes']);
      }
      expect(sentHeaders(plain).get('strict-transport-security')).toBeUndefined();
      expect(sentHeaders(tls).get('strict-transport-security')).toEqual(['max-age=1']);
      expect((tls as unknown as { _header: string })._header.startsWith('HTTP/1.1 201 Made\r\n')).toBe(true);
    });
  }

  it('refuses an own header named __proto__ and still validates the answer’s own headers', () => {
    const res = response('id-3');
    res.writeHead(200, { ['__proto__']: 'x', 'X-Ok': '1' } as never);
    expect(sentHeaders(res).get('x-ok')).toEqual(['1']);
    expect(sentHeaders(res).has('__proto__')).toBe(false);
    expect(() => response('id-4').writeHead(200, { 'X-Bad': 'a\r\nInjected: 1' })).toThrow();
  });

  it('is a plain ServerResponse without a request id', () => {
    const res = response(undefined);
    res.writeHead(204, { 'X-Own': '1' });
    const sent = sentHeaders(res);
    expect(sent.get('x-own')).toEqual(['1']);
    expect(sent.get('x-frame-options')).toBeUndefined();
  });
});
