import type { Context } from 'hono';
import type { AppEnv } from './env.js';
import { requestHeader } from './request-header.js';

/**
 * A fresh object of the headers every answer carries: the request id and those of contract
 * section 9. Built as a literal on purpose: spreading a shared object here cost the proxy's hot
 * path about a tenth of its throughput (bench/by-host.ts).
 */
export function answerHeaderObject(requestId: string): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': "default-src 'none'",
    'X-Request-Id': requestId,
  };
}
export const HSTS = 'max-age=63072000; includeSubDomains';
const FIXED = Object.entries(answerHeaderObject('')).filter(([name]) => name !== 'X-Request-Id');
/** Lower-cased names of the headers every answer carries, which an answer's own headers may not set. */
export const ANSWER_HEADER_NAMES: readonly string[] = Object.keys(answerHeaderObject('')).map((name) => name.toLowerCase());

/**
 * A runtime's response that puts the answer headers on whatever answer it writes, in its one
 * `writeHead` (runtime/node-response.ts): the front door tells it what this request's are.
 */
export interface AnswerHeaderWriter {
  readonly headersSent: boolean;
  dressAnswers(requestId: string, viaTls: boolean): void;
}

/** The runtime's answer-header writer of this request, when it has one and has not answered yet. */
export function answerHeaderWriterOf(c: Context<AppEnv>): AnswerHeaderWriter | undefined {
  const outgoing = c.env?.outgoing;
  return outgoing !== undefined && dressesAnswers(outgoing) && !outgoing.headersSent ? outgoing : undefined;
}

function dressesAnswers(outgoing: Partial<AnswerHeaderWriter>): outgoing is AnswerHeaderWriter {
  return typeof outgoing.dressAnswers === 'function';
}

/** HSTS only for requests that came through the TLS edge: a plain-HTTP answer must not pin hosts. */
export function viaTlsEdge(c: Context): boolean {
  const proto = requestHeader(c, 'x-forwarded-proto');
  return proto !== undefined && proto.split(',')[0]!.trim().toLowerCase() === 'https';
}

/**
 * Where the Node response cannot merge them (Bun, in-process requests): the headers go into the
 * context's prepared headers before the handler, so every answer built with `c.json()`/`c.body()`
 * is born with them.
 */
export function presetSecurityHeaders(c: Context, requestId: string, tls: boolean): void {
  c.header('X-Request-Id', requestId);
  for (const [name, value] of FIXED) c.header(name, value);
  if (tls) c.header('Strict-Transport-Security', HSTS);
}

/** After the handler: an answer built without the context (a raw `Response`) gets them too. */
export function ensureSecurityHeaders(res: Response, requestId: string, tls: boolean): void {
  const h = res.headers;
  if (h.get('X-Frame-Options') !== 'DENY') for (const [name, value] of FIXED) h.set(name, value);
  if (h.get('X-Request-Id') !== requestId) h.set('X-Request-Id', requestId);
  if (tls) {
    if (!h.has('Strict-Transport-Security')) h.set('Strict-Transport-Security', HSTS);
  } else if (h.has('Strict-Transport-Security')) {
    h.delete('Strict-Transport-Security');
  }
}
