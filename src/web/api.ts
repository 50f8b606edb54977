import type { Context } from 'hono';
import type { AppEnv, RuntimeBindings } from '../http/env.js';

/** The external face's own `fetch`: the pages call the public API through it, in-process. */
export type ApiFetch = (request: Request, env: RuntimeBindings) => Response | Promise<Response>;

export interface ApiError {
  code: string;
  message: string;
}

/** One answer of the API as a page reads it: status, JSON body (or the error), cookies it set. */
export interface ApiAnswer<T> {
  status: number;
  ok: boolean;
  body: T;
  error?: ApiError;
  setCookies: string[];
}

/** The request headers a page passes on: who the visitor is (cookie, host, address) and nothing else. */
const PASSED = ['cookie', 'host', 'user-agent', 'x-forwarded-proto', 'x-forwarded-for', 'x-real-ip', 'forwarded'];

/**
 * Calls one route of the public API as the visitor: the same cookie, host and client address, so
 * every rule (tier, host, limits, audit) applies to the page exactly as to a browser calling the
 * API itself. Never a feature's function: a page sees what any client of the API sees.
 */
export async function callApi<T = Record<string, unknown>>(
  c: Context<AppEnv>,
  fetchApi: ApiFetch,
  method: string,
  path: string,
  body?: unknown,
  clientIpHeader?: string,
): Promise<ApiAnswer<T>> {
  const headers = new Headers();
  for (const name of PASSED) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  if (clientIpHeader && c.req.header(clientIpHeader)) headers.set(clientIpHeader, c.req.header(clientIpHeader)!);
  if (body !== undefined) headers.set('content-type', 'application/json');
  const url = new URL(path, c.req.url);
  const request = new Request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  // Only the visitor's address: not its parsed request (the API reads headers from Node's parse
  // when it has one, and this request is another), nor its response (the answer is read here).
  const peer = c.env?.incoming?.socket?.remoteAddress ?? c.env?.requestIP?.(c.req.raw)?.address;
  const env: RuntimeBindings = peer ? { requestIP: () => ({ address: peer }) } : {};
  const res = await fetchApi(request, env);
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const error = !res.ok ? ((parsed as { error?: ApiError } | undefined)?.error ?? { code: `http_${res.status}`, message: res.statusText }) : undefined;
  return { status: res.status, ok: res.ok, body: parsed as T, error, setCookies: res.headers.getSetCookie() };
}
