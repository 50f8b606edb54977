import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import type { Access } from '../../http/tiers.js';
import {
  authSources,
  entryPolicy,
  saveAuthSources,
  saveEntryPolicy,
  saveWakePolicy,
  testAuthSource,
  wakePolicy,
} from './service.js';
import { AuthSourceEntrySchema, EntryPolicyFields, WakePolicyFields } from '../runtime-settings/index.js';
import type { VerifierParts } from '../verifier/index.js';
import type { AppDeps } from '../../http/env.js';
import type { ServersParts } from '../servers/index.js';

const Revision = z.string().max(32).openapi({ description: 'the revision read with the setting, named back when saving' });

const EntryPolicySchema = z
  .object({ ...EntryPolicyFields, defaultServer: z.string(), fallbackServer: z.string(), revision: Revision })
  .openapi('EntryPolicySettings');
const WakePolicySchema = z
  .object({ ...WakePolicyFields, revision: Revision, managed: z.boolean() })
  .openapi('WakePolicySettings');
const AuthSourcesSchema = z
  .object({ sources: z.array(AuthSourceEntrySchema), revision: Revision, managed: z.boolean() })
  .openapi('AuthSourcesSettings');

const OWNER: Access = { tier: 'admin' };
const ownerErrors = {
  403: errorAnswer('forbidden: the owner only; reauth_required: prove yourself again first (saves)'),
};

const internalEntryPolicy = defineRoute({ tier: 'service', callers: ['proxy', 'limbo'] }, {
  method: 'get',
  path: '/api/v1/internal/settings/entry-policy',
  summary: 'How players enter (the proxy polls it and keeps its last policy when this fails)',
  responses: { 200: json(EntryPolicySchema, 'the policy in force') },
});

const getEntryPolicy = defineRoute(OWNER, {
  method: 'get',
  path: '/api/v1/settings/entry-policy',
  summary: 'How players enter: the original default until the owner saves one',
  responses: { 200: json(EntryPolicySchema, 'the policy in force'), ...ownerErrors },
});

const putEntryPolicy = defineRoute(OWNER, {
  method: 'put',
  path: '/api/v1/settings/entry-policy',
  summary: 'Save how players enter, if it is still at the revision read',
  request: jsonBody(z.strictObject({ ...EntryPolicyFields, revision: Revision })),
  responses: {
    200: json(EntryPolicySchema, 'saved'),
    400: errorAnswer('bad_request: an invalid mode, target or offline policy'),
    ...ownerErrors,
    404: errorAnswer('not_found: a target server does not exist'),
    409: errorAnswer('conflict: the policy changed since it was read'),
  },
});

const getWakePolicy = defineRoute(OWNER, {
  method: 'get',
  path: '/api/v1/settings/wake-policy',
  summary: 'The running-server cap of a node and the wake cooldown, as every wake reads them',
  responses: { 200: json(WakePolicySchema, 'the policy in force'), ...ownerErrors },
});

const putWakePolicy = defineRoute(OWNER, {
  method: 'put',
  path: '/api/v1/settings/wake-policy',
  summary: 'Save the running cap (0 to 10,000; 0 is none) and the wake cooldown (0 to 3,600 s)',
  request: jsonBody(z.strictObject({ ...WakePolicyFields, revision: Revision })),
  responses: {
    200: json(WakePolicySchema, 'saved'),
    400: errorAnswer('bad_request: out of bounds'),
    ...ownerErrors,
    409: errorAnswer('conflict: the policy changed since it was read'),
  },
});

const getAuthSources = defineRoute(OWNER, {
  method: 'get',
  path: '/api/v1/settings/auth-sources',
  summary: 'The session sources after the primary, in the order logins ask them',
  responses: { 200: json(AuthSourcesSchema, 'the list in force'), ...ownerErrors },
});

const putAuthSources = defineRoute(OWNER, {
  method: 'put',
  path: '/api/v1/settings/auth-sources',
  summary: 'Save the ordered session sources, if still at the revision read; logins use them without a restart',
  request: jsonBody(z.strictObject({ sources: z.array(AuthSourceEntrySchema).max(64), revision: Revision })),
  responses: {
    200: json(AuthSourcesSchema, 'saved'),
    400: errorAnswer('bad_request: a tag, prefix or URL breaks the rules'),
    ...ownerErrors,
    409: errorAnswer('auth_sources_changed: changed since read; auth_source_tag_locked: a saved tag was removed or renamed'),
  },
});

const testSource = defineRoute(OWNER, {
  method: 'post',
  path: '/api/v1/settings/auth-sources/test',
  summary: 'Ask one source whether a fresh serverId joined (a healthy source answers 204); nothing is saved',
  request: jsonBody(AuthSourceEntrySchema),
  responses: {
    200: json(z.object({ ok: z.boolean(), status: z.number().int(), elapsed_ms: z.number().int() }), 'how it answered'),
    400: errorAnswer('bad_request: the source breaks the rules (its URL is not an outside http(s) address)'),
    ...ownerErrors,
    503: errorAnswer('auth_source_unavailable: no answer (refused, timed out, or too large)'),
  },
});

/** The proxy's and the login limbo's read of the entry policy. Internal face. */
export function internalSettingsRoutes(deps: AppDeps & VerifierParts & ServersParts) {
  return createRouter().openapi(internalEntryPolicy, async (c) => c.json(await entryPolicy(deps), 200));
}

/** The platform settings pages. External face, admin tier, the owner only. */
export function settingsRoutes(deps: AppDeps & VerifierParts & ServersParts) {
  return createRouter()
    .openapi(getEntryPolicy, async (c) => c.json(await entryPolicy(deps, c.var.session), 200))
    .openapi(putEntryPolicy, async (c) => c.json(await saveEntryPolicy(deps, c.var.session, c.req.valid('json'), c.var.requestId), 200))
    .openapi(getWakePolicy, async (c) => c.json(await wakePolicy(deps, c.var.session), 200))
    .openapi(putWakePolicy, async (c) => c.json(await saveWakePolicy(deps, c.var.session, c.req.valid('json'), c.var.requestId), 200))
    .openapi(getAuthSources, async (c) => c.json(await authSources(deps, c.var.session), 200))
    .openapi(putAuthSources, async (c) => c.json(await saveAuthSources(deps, c.var.session, c.req.valid('json'), c.var.requestId), 200))
    .openapi(testSource, async (c) => c.json(await testAuthSource(deps, c.var.session, c.req.valid('json')), 200));
}
