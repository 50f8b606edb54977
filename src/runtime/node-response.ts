import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { requestIdFor } from '../http/request-id.js';
import { ANSWER_HEADER_NAMES, answerHeaderObject, HSTS, type AnswerHeaderWriter } from '../http/security-headers.js';

const HSTS_NAME = 'strict-transport-security';

/**
 * A Node response that adds the request id and the contract's fixed headers to whatever answer
 * @hono/node-server writes: its one `writeHead` gets them merged with the answer's own headers
 * (an answer may not replace them), so each is sent exactly once whatever built the answer.
 * An answer the front door never saw (the adapter's, Node's own) is dressed all the same, with
 * the request id it names, if any, or a fresh one.
 */
export class AnswerResponse<Request extends IncomingMessage = IncomingMessage>
  extends ServerResponse<Request>
  implements AnswerHeaderWriter
{
  private requestId: string | undefined = undefined;
  private viaTls = false;

  /** The request id (made or accepted by the front door) and whether HSTS applies. */
  dressAnswers(requestId: string, viaTls: boolean): void {
    this.requestId = requestId;
    this.viaTls = viaTls;
  }

  override writeHead(statusCode: number, reason?: unknown, headers?: unknown): this {
    const withReason = typeof reason === 'string';
    const own = asObject((withReason ? headers : reason) as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined);
    const requestId = this.requestId ?? requestIdFor(ownRequestId(own));
    const merged = withAnswerHeaders(own, requestId, this.viaTls);
    return withReason ? super.writeHead(statusCode, reason, merged) : super.writeHead(statusCode, merged);
  }
}

/** node:http also takes headers as a flat list of names and values. */
function asObject(headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): OutgoingHttpHeaders | undefined {
  if (!Array.isArray(headers)) return headers;
  const object: OutgoingHttpHeaders = {};
  for (let i = 0; i + 1 < headers.length; i += 2) object[String(headers[i])] = headers[i + 1] as string;
  return object;
}

function ownRequestId(own: OutgoingHttpHeaders | undefined): string | undefined {
  if (own === undefined) return undefined;
  for (const name in own) if (name.toLowerCase() === 'x-request-id') return String(own[name]);
  return undefined;
}

/** The answer headers, then the answer's own (never one of ours; HSTS only behind the TLS edge). */
const PAGE_POLICY = 'content-security-policy';

export function withAnswerHeaders(own: OutgoingHttpHeaders | undefined, requestId: string, tls: boolean): OutgoingHttpHeaders {
  const merged: OutgoingHttpHeaders = answerHeaderObject(requestId);
  let hsts = false;
  if (own) {
    for (const name in own) {
      const lower = name.toLowerCase();
      // `__proto__` would replace the merged object's prototype instead of naming a header.
      // A page of src/web brings its own policy (nonces, its own assets); the API's answers never
      // set one and keep `default-src 'none'`.
      if (lower === PAGE_POLICY && typeof own[name] === 'string') {
        merged['Content-Security-Policy'] = own[name];
        continue;
      }
      if (ANSWER_HEADER_NAMES.includes(lower) || lower === '__proto__') continue;
      if (lower === HSTS_NAME) {
        if (!tls) continue;
        hsts = true;
      }
      merged[name] = own[name];
    }
  }
  if (tls && !hsts) merged['Strict-Transport-Security'] = HSTS;
  return merged;
}
