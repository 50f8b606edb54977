import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { parse } from 'hono/utils/cookie';
import { requestHeader } from '../../../http/request-header.js';
import { SESSION_COOKIE, SESSION_TTL_MS } from './session-service.js';

/** A session token is 32 random bytes in base64url; anything far longer is not ours. */
const MAX_TOKEN_LENGTH = 128;

/**
 * The request's session token, when it carries one that could be ours. Read as Hono's `getCookie`
 * reads it, from the one header: `c.req.raw.headers` would build every header of the request
 * into a fetch `Headers` on each signed-in request.
 */
export function sessionToken(c: Context): string | undefined {
  const header = requestHeader(c, 'cookie');
  const token = header ? parse(header, SESSION_COOKIE)[SESSION_COOKIE] : undefined;
  return token && token.length <= MAX_TOKEN_LENGTH ? token : undefined;
}

/** `svc_session`: HttpOnly, Secure, SameSite=Lax, host-only (no Domain), whole site. */
export function setSessionCookie(c: Context, token: string, maxAgeMs: number = SESSION_TTL_MS): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true,
    secure: true,
    sameSite: 'Lax',
    path: '/',
    maxAge: Math.floor(maxAgeMs / 1000),
  });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
}
