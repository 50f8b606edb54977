import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { RequestError } from '@hono/node-server';
import { envelopeText, ERROR_STATUS } from '../http/errors.js';
import { type ErrorCode } from '../lib/errors.js';
import { requestIdFor } from '../http/request-id.js';
import type { Logger } from '../lib/logger.js';
import { withAnswerHeaders } from './node-response.js';

/**
 * Answers that Node's parser or the adapter would otherwise make on their own (issue 20 item 5):
 * each carries the contract's headers, a request id and the envelope, and leaves an info line.
 */

/** What a parser error is to the client: a head too large (431), too slow (408), or malformed (400). */
function codeOfParserError(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'header_too_large';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

/** `clientError`: the answer is written on the socket itself (no request was made), then it closes. */
export function answerClientErrors(server: Server, log: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset or a half-written answer leaves nothing to answer on.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const code = codeOfParserError(err);
    const requestId = requestIdFor(undefined);
    const body = envelopeText(code, requestId);
    const headers = withAnswerHeaders(
      { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' },
      requestId,
      false,
    );
    const status = ERROR_STATUS[code];
    let head = `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${String(value)}\r\n`;
    socket.end(`${head}\r\n${body}`);
    log.info({ status, code: err.code, request_id: requestId }, 'request refused by the HTTP parser');
  });
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** `checkExpectation`: any Expect but 100-continue is 417 with the envelope. */
export function answerExpectations(server: Server, log: Logger): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const inbound = req.headers['x-request-id'];
    const requestId = requestIdFor(typeof inbound === 'string' ? inbound : undefined);
    const body = envelopeText('expectation_failed', requestId);
    res.writeHead(417, { 'Content-Type': 'application/json', 'X-Request-Id': requestId, Connection: 'close' });
    res.end(body);
    log.info({ status: 417, method: req.method, request_id: requestId }, 'request refused: unsupported Expect');
  });
}

/**
 * The adapter's error answer (its `errorHandler`): a request it could not build (a missing or bad
 * Host, a bad target) is 400; anything else failed outside the app's own handling and is a 500.
 */
export function adapterErrorAnswer(log: Logger) {
  return (err: unknown): Response => {
    const requestId = requestIdFor(undefined);
    const clientFault = err instanceof RequestError;
    const code: ErrorCode = clientFault ? 'bad_request' : 'internal';
    if (clientFault) log.info({ status: 400, request_id: requestId, reason: err.message }, 'request refused by the adapter');
    else log.error({ err, request_id: requestId }, 'unexpected error outside the app');
    return new Response(envelopeText(code, requestId, clientFault ? `The request is malformed: ${err.message}.` : undefined), {
      status: ERROR_STATUS[code],
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': requestId },
    });
  };
}
