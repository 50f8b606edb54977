import type { Context } from 'hono';
import type { HasJoinedQuery } from '../../adapters/session-sources/sources.js';
import type { AppDeps, AppEnv } from '../../http/env.js';
import { createRouter, defineRoute } from '../../http/route.js';
import { HasJoinedProfileSchema } from './schema.js';
import { byteLength, MAX_PARAM_BYTES } from './service.js';
import type { VerifierParts } from './service.js';

/** Without it the Node adapter sends an empty chunked body; the contract says no body at all. */
const NO_BODY = { 'Content-Length': '0' };

export const HAS_JOINED_PATH = '/session/minecraft/hasJoined';

const queryParameter = (name: string, required: boolean, description: string) => ({
  name,
  in: 'query' as const,
  required,
  description: `${description} At most ${MAX_PARAM_BYTES} bytes; missing, repeated or longer answers 204 without asking any source.`,
  schema: { type: 'string' as const, maxLength: MAX_PARAM_BYTES },
});

/**
 * A GET that declares a body is refused before the JSON body rules of defineRoute could answer
 * 415: 400 with no body and the connection closed, as the contract says (the body is never read).
 * `Content-Length: 0`, which the proxy's Java client sends on every GET, declares no body.
 */
const refuseDeclaredBody = (c: Context<AppEnv>) => c.body(null, 400, { Connection: 'close', ...NO_BODY });

/**
 * The query is read by hand, not by a zod validator: every bad parameter is the contract's 204
 * (the proxy then kicks with its online-mode message), never a 400. Unknown parameters are
 * ignored, since the proxy may send more than these three.
 */
const hasJoined = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: HAS_JOINED_PATH,
    summary: 'Session verifier: asks the configured identity sources whether the player joined',
    parameters: [
      queryParameter('username', true, 'The name the client logged in with.'),
      queryParameter('serverId', true, 'The serverId hash the client sent to its session server.'),
      queryParameter('ip', false, "The client's address, passed on to the sources."),
    ],
    responses: {
      200: {
        description: 'validated; a third-party id is namespaced and a name taken at the primary is prefixed',
        content: { 'application/json': { schema: HasJoinedProfileSchema } },
      },
      204: { description: 'not admitted: bad parameters, nobody validated, barred, or an unusable identity' },
      400: { description: 'the request declared a body; no body is sent and the connection is closed' },
      503: { description: 'no source validated and at least one failed; no body' },
    },
  },
  { onDeclaredBody: refuseDeclaredBody },
);

/** Single, present, non-empty and within the byte limit; anything else is not admitted. */
function readParam(all: Record<string, string[]>, name: string, required: boolean): string | undefined | null {
  const values = all[name];
  if (values === undefined) return required ? null : undefined;
  if (values.length !== 1) return null;
  const value = values[0]!;
  if (value === '') return required ? null : undefined;
  return byteLength(value) > MAX_PARAM_BYTES ? null : value;
}

function readQuery(all: Record<string, string[]>): HasJoinedQuery | undefined {
  const username = readParam(all, 'username', true);
  const serverId = readParam(all, 'serverId', true);
  const ip = readParam(all, 'ip', false);
  if (!username || !serverId || ip === null) return undefined;
  return ip === undefined ? { username, serverId } : { username, serverId, ip };
}

export function verifierRoutes(deps: AppDeps & VerifierParts) {
  return createRouter().openapi(hasJoined, async (c) => {
    const query = readQuery(c.req.queries());
    if (query === undefined) return c.body(null, 204);
    const { requestId } = c.var;
    const verdict = await deps.sessionVerifier.verify(query, requestId);
    if (verdict.status === 200) return c.json(verdict.profile, 200);
    return verdict.status === 204 ? c.body(null, 204) : c.body(null, 503, NO_BODY);
  });
}
