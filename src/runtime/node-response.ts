import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { answerHeaderObject, HSTS } from '../http/security-headers.js';

/** What every answer of a request carries whatever built it: the request id, the fixed headers. */
export interface AnswerHeaders {
  requestId: string;
  /** The request came through the TLS edge: HSTS is added (an answer's own HSTS is kept). */
  tls: boolean;
}

/** Lower-cased names the answer's own headers may not set (HSTS is decided separately). */
const OURS = new Set(['x-content-type-options', 'x-frame-options', 'referrer-policy', 'content-security-policy', 'x-request-id']);

/**
 * A Node response that merges the answer headers into the one `writeHead` call @hono/node-server
 * makes. Node then validates and serialises each header once; `setHeader` before the answer would
 * keep a second header table and merge it in `writeHead`, which measurably slowed the proxy's hot
 * path (bench/by-host.ts). Without `answerHeaders` it is a plain ServerResponse.
 */
export class AnswerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  answerHeaders: AnswerHeaders | undefined = undefined;

  override writeHead(statusCode: number, reason?: unknown, headers?: unknown): this {
    const answer = this.answerHeaders;
    if (answer) {
      if (typeof reason === 'string') headers = withAnswerHeaders(headers as OutgoingHttpHeaders | undefined, answer);
      else reason = withAnswerHeaders(reason as OutgoingHttpHeaders | undefined, answer);
    }
    return super.writeHead(statusCode, reason as string, headers as OutgoingHttpHeaders);
  }
}

function withAnswerHeaders(own: OutgoingHttpHeaders | undefined, answer: AnswerHeaders): OutgoingHttpHeaders {
  const merged: OutgoingHttpHeaders = answerHeaderObject(answer.requestId);
  let hsts = false;
  if (own) {
    for (const name in own) {
      const lower = name.toLowerCase();
      if (OURS.has(lower)) continue;
      if (lower === 'strict-transport-security') {
        if (!answer.tls) continue;
        hsts = true;
      }
      merged[name] = own[name];
    }
  }
  if (answer.tls && !hsts) merged['Strict-Transport-Security'] = HSTS;
  return merged;
}
