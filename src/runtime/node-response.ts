import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { ANSWER_HEADER_NAMES, answerHeaderObject, HSTS, type AnswerHeaderWriter } from '../http/security-headers.js';

const HSTS_NAME = 'strict-transport-security';

/**
 * A Node response that adds the request id and the contract's fixed headers to whatever answer
 * @hono/node-server writes: its one `writeHead` gets them merged with the answer's own headers
 * (an answer may not replace them), so each is sent exactly once whatever built the answer.
 * Until the front door dresses it (`dressAnswers`), it is a plain ServerResponse.
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
    const requestId = this.requestId;
    if (requestId === undefined) return super.writeHead(statusCode, reason as string, headers as OutgoingHttpHeaders);
    const withReason = typeof reason === 'string';
    const merged = withAnswerHeaders((withReason ? headers : reason) as OutgoingHttpHeaders | undefined, requestId, this.viaTls);
    return withReason ? super.writeHead(statusCode, reason, merged) : super.writeHead(statusCode, merged);
  }
}

/** The answer headers, then the answer's own (never one of ours; HSTS only behind the TLS edge). */
export function withAnswerHeaders(own: OutgoingHttpHeaders | undefined, requestId: string, tls: boolean): OutgoingHttpHeaders {
  const merged: OutgoingHttpHeaders = answerHeaderObject(requestId);
  let hsts = false;
  if (own) {
    for (const name in own) {
      const lower = name.toLowerCase();
      // `__proto__` would replace the merged object's prototype instead of naming a header.
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
