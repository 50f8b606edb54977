import type { Context } from 'hono';
import { CALLERS, type Caller } from '../config.js';
import { tokensEqual } from '../lib/secrets.js';
import type { AppEnv } from './env.js';
import { DomainError } from '../lib/errors.js';
import { requestHeader } from './request-header.js';

/**
 * Which configured caller holds this token. Every configured token is compared in constant time
 * (lib/secrets `tokensEqual`), whatever matched before, so timing tells nothing about which
 * caller's token, or how much of one, was presented.
 */
export function identifyCaller(tokens: Partial<Record<Caller, string>>, presented: string): Caller | undefined {
  let found: Caller | undefined;
  for (const caller of CALLERS) {
    const expected = tokens[caller];
    if (expected !== undefined && tokensEqual(presented, expected) && found === undefined) found = caller;
  }
  return found;
}

/** RFC 6750's `Bearer` scheme, in any case; trailing white space allowed. */
const BEARER = /^Bearer +(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, if it is of that form. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/** Internal-face auth: 401 without a genuine token, 403 `wrong_caller` for a caller not listed. */
export function checkCaller(c: Context<AppEnv>, allowed: ReadonlySet<Caller>): void {
  const token = bearerToken(requestHeader(c, 'authorization'));
  const caller = token === undefined ? undefined : identifyCaller(c.get('deps').config.serviceTokens, token);
  if (!caller) {
    throw new DomainError('unauthorized', 'A valid service token is required.', { challenge: 'Bearer' });
  }
  c.set('caller', caller);
  if (!allowed.has(caller)) throw new DomainError('wrong_caller');
}
