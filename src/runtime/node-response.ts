import { OutgoingMessage, ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { isHeaderName } from '../http/request-header.js';
import { answerHeaderObject, HSTS } from '../http/security-headers.js';

/** Lower-cased names the answer's own headers may not set (HSTS is decided separately). */
const OURS = ['x-content-type-options', 'x-frame-options', 'referrer-policy', 'content-security-policy', 'x-request-id'];
const HSTS_NAME = 'strict-transport-security';

/** What an answer's own header is to the headers every answer carries (names compared in any case, uncopied). */
function ownHeaderRole(name: string): 'ours' | 'hsts' | 'own' {
  if (isHeaderName(name, HSTS_NAME)) return 'hsts';
  for (const reserved of OURS) if (isHeaderName(name, reserved)) return 'ours';
  // A plain object is node:http's header table here: this name would replace its prototype.
  return name === '__proto__' ? 'ours' : 'own';
}

/**
 * node:http's own table of a response's headers (`kOutHeaders`: lower-cased name → [name, value]),
 * where `setHeader` puts each header once it has validated it. `writeHead` serialises that table
 * without validating it again; handed as an object, every header is validated on every answer,
 * which cost the proxy's hot path more than any other piece of the contract's answer headers
 * (bench/by-host.ts). The table's symbol is not exported, so it is found by its name; where a
 * runtime has none, the headers go through `writeHead` as an object (`answerHeaderObject`).
 */
const OUT_HEADERS = Object.getOwnPropertySymbols(new OutgoingMessage()).find((s) => s.description === 'kOutHeaders');

type HeaderEntry = [name: string, value: string];
/**
 * Constant and valid: the table may share them (setHeader replaces an entry, never changes one).
 * The values are security-headers.ts's, the one place the contract's headers are written down.
 */
const fixed = answerHeaderObject('');
const entry = (name: string): HeaderEntry => [name, fixed[Object.keys(fixed).find((key) => key.toLowerCase() === name)!]!];
const NOSNIFF = entry('x-content-type-options');
const DENY = entry('x-frame-options');
const NO_REFERRER = entry('referrer-policy');
const NO_CONTENT = entry('content-security-policy');
const HSTS_ENTRY: HeaderEntry = [HSTS_NAME, HSTS];

/**
 * A Node response that adds the request id and the contract's fixed headers to whatever answer
 * @hono/node-server writes: they go into node:http's header table before its one `writeHead`
 * serialises it, so each is sent exactly once whatever built the answer. Without `requestId` it
 * is a plain ServerResponse.
 */
export class AnswerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /**
   * The request id every answer of this request carries, set by the front door, which makes it or
   * accepts it only of letters, digits, `-`, `_` and `=`: it goes on the wire as it is.
   */
  requestId: string | undefined = undefined;
  /** The request came through the TLS edge: HSTS is added (an answer's own HSTS is kept). */
  viaTls = false;

  override writeHead(statusCode: number, reason?: unknown, headers?: unknown): this {
    const requestId = this.requestId;
    if (requestId === undefined) return super.writeHead(statusCode, reason as string, headers as OutgoingHttpHeaders);
    const withReason = typeof reason === 'string';
    const own = (withReason ? headers : reason) as OutgoingHttpHeaders | undefined;
    const self = this as unknown as Record<symbol, unknown>;
    if (OUT_HEADERS === undefined || self[OUT_HEADERS] != null) {
      const merged = withAnswerHeaders(own, requestId, this.viaTls);
      return withReason ? super.writeHead(statusCode, reason, merged) : super.writeHead(statusCode, merged);
    }
    // A plain literal: a null-prototype one is a slow dictionary (see ownHeaderRole for `__proto__`).
    self[OUT_HEADERS] = {
      'x-content-type-options': NOSNIFF,
      'x-frame-options': DENY,
      'referrer-policy': NO_REFERRER,
      'content-security-policy': NO_CONTENT,
      'x-request-id': ['x-request-id', requestId],
    };
    let hsts = false;
    if (own) {
      for (const name in own) {
        const role = ownHeaderRole(name);
        if (role === 'ours' || (role === 'hsts' && !this.viaTls)) continue;
        if (role === 'hsts') hsts = true;
        this.setHeader(name, own[name]!); // validated by node:http, as writeHead would
      }
    }
    if (this.viaTls && !hsts) (self[OUT_HEADERS] as Record<string, HeaderEntry>)['strict-transport-security'] = HSTS_ENTRY;
    return withReason ? super.writeHead(statusCode, reason) : super.writeHead(statusCode);
  }
}

function withAnswerHeaders(own: OutgoingHttpHeaders | undefined, requestId: string, tls: boolean): OutgoingHttpHeaders {
  const merged: OutgoingHttpHeaders = answerHeaderObject(requestId);
  let hsts = false;
  if (own) {
    for (const name in own) {
      const role = ownHeaderRole(name);
      if (role === 'ours' || (role === 'hsts' && !tls)) continue;
      if (role === 'hsts') hsts = true;
      merged[name] = own[name];
    }
  }
  if (tls && !hsts) merged['Strict-Transport-Security'] = HSTS;
  return merged;
}
