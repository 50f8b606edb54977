import type { Context } from 'hono';
import { CALLERS, type Caller } from '../config.js';
import { tokensEqual } from '../lib/secrets.js';
import type { AppEnv } from './env.js';
import { ApiError } from './errors.js';
import { requestHeader } from './request-header.js';

/**
 * Which configured caller holds this token (`presented`, or its part from `from` to `to`). Every
 * configured token is compared in constant time (lib/secrets `tokensEqual`), whatever matched
 * before, so timing tells nothing about which caller's token, or how much of one, was presented.
 */
export function identifyCaller(
  tokens: Partial<Record<Caller, string>>,
  presented: string,
  from = 0,
  to = presented.length,
): Caller | undefined {
  const { callers, expected } = configuredOf(tokens);
  let found: Caller | undefined;
  for (let i = 0; i < callers.length; i++) {
    if (tokensEqual(presented, expected[i]!, from, to) && found === undefined) found = callers[i];
  }
  return found;
}

/** The configured callers and their tokens as two lists, made once per configuration. */
const configured = new WeakMap<object, { callers: Caller[]; expected: string[] }>();
function configuredOf(tokens: Partial<Record<Caller, string>>) {
  let lists = configured.get(tokens);
  if (!lists) {
    const callers = CALLERS.filter((caller) => tokens[caller] !== undefined);
    lists = { callers, expected: callers.map((caller) => tokens[caller]!) };
    configured.set(tokens, lists);
  }
  return lists;
}

/**
 * Where the token of `Bearer <token>` starts in the header: the scheme in any case, then one or
 * more spaces; the token runs to `bearerTokenEnd`. It is read in place, as the proxy presents it on
 * every call. A span holding white space is no token (`/^Bearer[ ]+(\S+)\s*$/i` refuses it), and it
 * matches none: configured tokens hold none (config.ts). -1 when the header is not of that form.
 */
export function bearerTokenStart(header: string, end = bearerTokenEnd(header)): number {
  if (header.length < 8 || header.charCodeAt(6) !== SPACE) return -1;
  if (!header.startsWith('Bearer') && header.slice(0, 6).toLowerCase() !== 'bearer') return -1;
  let start = 7;
  while (header.charCodeAt(start) === SPACE) start++;
  return start < end ? start : -1;
}

/** The end of the token: the header less its trailing white space. */
export function bearerTokenEnd(header: string): number {
  let end = header.length;
  while (end > 0 && isWhitespace(header.charCodeAt(end - 1))) end--;
  return end;
}

const SPACE = 0x20;
/** JavaScript's `\s`. */
function isWhitespace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** The caller whose token an `Authorization` header presents, if any. */
function callerOf(tokens: Partial<Record<Caller, string>>, header: string | undefined): Caller | undefined {
  if (header === undefined) return undefined;
  const end = bearerTokenEnd(header);
  const start = bearerTokenStart(header, end);
  return start < 0 ? undefined : identifyCaller(tokens, header, start, end);
}

/** Internal-face auth: 401 without a genuine token, 403 `wrong_caller` for a caller not listed. */
export function checkCaller(c: Context<AppEnv>, allowed: ReadonlySet<Caller>): void {
  const caller = callerOf(c.get('deps').config.serviceTokens, requestHeader(c, 'authorization'));
  if (!caller) {
    throw new ApiError('unauthorized', 'A valid service token is required.', {
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  c.set('caller', caller);
  if (!allowed.has(caller)) throw new ApiError('wrong_caller');
}
