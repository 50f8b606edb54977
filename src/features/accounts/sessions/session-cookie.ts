import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { SESSION_COOKIE, SESSION_TTL_MS } from './session-service.js';

/** A session token is 32 random bytes in base64url; anything far longer is not ours. */
const MAX_TOKEN_LENGTH = 128;

/** The request's session token, when it carries one that could be ours. */
export function sessionToken(c: Context): string | undefined {
  const token = getCookie(c, SESSION_COOKIE);
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
