import type { Context } from 'hono';
import { CALLERS, type Caller } from '../config.js';
import { digestsEqual, sha256Digest } from '../lib/secrets.js';
import type { AppEnv } from './env.js';
import { ApiError } from './errors.js';

/** The sha-256 of each configured token, computed once per token table (not per request). */
const expectedDigests = new WeakMap<object, Array<[Caller, Buffer]>>();

function digestsOf(tokens: Partial<Record<Caller, string>>): Array<[Caller, Buffer]> {
  let digests = expectedDigests.get(tokens);
  if (!digests) {
    digests = CALLERS.flatMap((caller): Array<[Caller, Buffer]> => {
      const token = tokens[caller];
      return token === undefined ? [] : [[caller, sha256Digest(token)]];
    });
    expectedDigests.set(tokens, digests);
  }
  return digests;
}

/**
 * Which configured caller holds this token. The presented token is hashed once and its digest is
 * compared with every configured token's digest in constant time, so neither the content nor the
 * length of a token leaks through timing, and every caller is always compared.
 */
export function identifyCaller(tokens: Partial<Record<Caller, string>>, presented: string): Caller | undefined {
  const presentedDigest = sha256Digest(presented);
  let found: Caller | undefined;
  for (const [caller, expected] of digestsOf(tokens)) {
    if (digestsEqual(presentedDigest, expected) && found === undefined) found = caller;
  }
  return found;
}

function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** Internal-face auth: 401 without a genuine token, 403 `wrong_caller` for a caller not listed. */
export function checkCaller(c: Context<AppEnv>, allowed: ReadonlySet<Caller>): void {
  const token = bearerToken(c.req.header('authorization'));
  const caller = token === undefined ? undefined : identifyCaller(c.get('deps').config.serviceTokens, token);
  if (!caller) {
    throw new ApiError('unauthorized', 'A valid service token is required.', {
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  c.set('caller', caller);
  if (!allowed.has(caller)) throw new ApiError('wrong_caller');
}
