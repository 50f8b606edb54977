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
  return cookieToken(c, SESSION_COOKIE);
}

function cookieToken(c: Context, name: string): string | undefined {
  const header = requestHeader(c, 'cookie');
  const token = header ? parse(header, name)[name] : undefined;
  return token && token.length <= MAX_TOKEN_LENGTH ? token : undefined;
}

/** Every cookie of ours: HttpOnly, Secure, SameSite=Lax, host-only (no Domain), whole site. */
const COOKIE = { httpOnly: true, secure: true, sameSite: 'Lax', path: '/' } as const;

/**
 * The device cookie (`svc_device`): a random token given to the browser at each password sign-in
 * and kept for a year, whose hash the session row keeps. A later password sign-in presenting it
 * for the same account is a known client's (the hashing gate's own lane), from any address: a
 * person on a new network is not queued behind a flood of strangers (OWASP's device cookies).
 * It grants nothing else: it is no session and signs nobody in.
 */
export const DEVICE_COOKIE = 'svc_device';
const DEVICE_TTL_S = 365 * 24 * 60 * 60;

export function deviceToken(c: Context): string | undefined {
  return cookieToken(c, DEVICE_COOKIE);
}

export function setDeviceCookie(c: Context, token: string): void {
  setCookie(c, DEVICE_COOKIE, token, { ...COOKIE, maxAge: DEVICE_TTL_S });
}

/** `svc_session`, for the session's lifetime. */
export function setSessionCookie(c: Context, token: string, maxAgeMs: number = SESSION_TTL_MS): void {
  setCookie(c, SESSION_COOKIE, token, { ...COOKIE, maxAge: Math.floor(maxAgeMs / 1000) });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, COOKIE);
}
