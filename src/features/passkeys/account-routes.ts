import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { beginRegistration, finishRegistration, ownPasskeys, removeOwnPasskey } from './account-service.js';
import { AttestationSchema, PasskeyCredentialSchema, PasskeyNameSchema, WebAuthnOptionsSchema } from './schema.js';

// Adding or removing a passkey is setup-allowed: the first passkey is how setup lockdown ends.
const SETUP_ALLOWED = { tier: 'app', setupAllowed: true } as const;
const unavailable = { 503: errorAnswer('passkey_unavailable: no relying party is configured') };
const reauth = { 403: errorAnswer('reauth_required, or forbidden, setup_required, cross_site') };

const registerBegin = defineRoute(SETUP_ALLOWED, {
  method: 'post',
  path: '/api/v1/account/passkey/register/begin',
  summary: 'Start adding a passkey: the WebAuthn creation options, verbatim',
  responses: { 200: json(WebAuthnOptionsSchema, 'creation options for navigator.credentials.create()'), ...reauth, ...unavailable },
});

const registerFinish = defineRoute(SETUP_ALLOWED, {
  method: 'post',
  path: '/api/v1/account/passkey/register/finish',
  summary: 'Bind the new passkey; the first one ends setup lockdown',
  request: jsonBody(z.strictObject({ name: PasskeyNameSchema.optional(), attestation: AttestationSchema })),
  responses: {
    201: json(PasskeyCredentialSchema, 'bound'),
    400: errorAnswer('bad_request, passkey_challenge_invalid (no live ceremony) or invalid_attestation'),
    409: errorAnswer('passkey_already_bound'),
    ...reauth,
    ...unavailable,
  },
});

const list = defineRoute(SETUP_ALLOWED, {
  method: 'get',
  path: '/api/v1/account/passkey/credentials',
  summary: 'My passkeys, newest first (never a public key)',
  responses: { 200: json(z.object({ credentials: z.array(PasskeyCredentialSchema) }), 'credentials') },
});

const unbind = defineRoute(SETUP_ALLOWED, {
  method: 'delete',
  path: '/api/v1/account/passkey/credentials/{id}',
  summary: 'Unbind one of my passkeys',
  request: { params: z.object({ id: z.string().min(1).max(128) }) },
  responses: { 200: json(z.object({ removed: z.literal(true) }), 'removed'), 404: errorAnswer('not_found: no passkey of mine has this id'), ...reauth },
});

/** The signed-in account's passkeys. External face. */
export function passkeyAccountRoutes() {
  return createRouter()
    .openapi(registerBegin, async (c) => c.json(await beginRegistration(c.var.deps, c.var.session), 200))
    .openapi(registerFinish, async (c) => c.json(await finishRegistration(c.var.deps, c.var.session, c.req.valid('json'), c.var.requestId), 201))
    .openapi(list, async (c) => c.json({ credentials: await ownPasskeys(c.var.deps, c.var.session) }, 200))
    .openapi(unbind, async (c) => {
      await removeOwnPasskey(c.var.deps, c.var.session, c.req.valid('param').id, c.var.requestId);
      return c.json({ removed: true as const }, 200);
    });
}
