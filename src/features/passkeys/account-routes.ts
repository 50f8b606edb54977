import { z } from '@hono/zod-openapi';
import { and, eq } from 'drizzle-orm';
import { users } from '../../db/schema/accounts.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { writeAudit } from '../audit/index.js';
import { findUserById } from '../accounts/users-service.js';
import { recordProof, requireReauth } from '../reauth/service.js';
import { replaceCeremony, takeCeremony } from './ceremonies.js';
import { deleteOwnCredential, insertCredential, listCredentials, toCredentialView } from './credentials.js';
import { requireRelyingParty } from './relying-party.js';
import { AttestationSchema, PasskeyCredentialSchema, PasskeyNameSchema, WebAuthnOptionsSchema } from './schema.js';
import { registrationOptions, verifyAttestation } from './webauthn.js';

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
    .openapi(registerBegin, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const rp = requireRelyingParty(deps.config);
      await requireReauth(c);
      const db = deps.database.db;
      const user = await findUserById(db, session.userId);
      if (!user) throw new DomainError('unauthorized');
      const options = await registrationOptions(rp, deps.random, user, await listCredentials(db, user.id));
      await replaceCeremony(db, { purpose: 'register', subject: user.id, userId: user.id, challenge: options.challenge, now: deps.clock.now() });
      return c.json(options, 200);
    })
    .openapi(registerFinish, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const body = c.req.valid('json');
      const rp = requireRelyingParty(deps.config);
      await requireReauth(c);
      const db = deps.database.db;
      const now = deps.clock.now();
      const live = await takeCeremony(db, { purpose: 'register', subject: session.userId, now });
      if (!live) throw new DomainError('passkey_challenge_invalid', 'No passkey registration is in progress; begin again.');
      const refused = (reason: string) => deps.log.info({ request_id: c.var.requestId, reason }, 'passkey attestation refused');
      const verified = await verifyAttestation(rp, body.attestation, live.challenge, refused);
      if (!verified) throw new DomainError('invalid_attestation', 'The passkey attestation could not be verified.');
      const row = await db.transaction(async (tx) => {
        const stored = await insertCredential(tx, { ...verified, userId: session.userId, name: body.name ?? '', createdAt: now });
        if (!stored) return undefined;
        // A passkey is a durable way in: it ends first-run setup lockdown for the account.
        await tx.update(users).set({ inSetup: false, updatedAt: now }).where(and(eq(users.id, session.userId), eq(users.inSetup, true)));
        // Registering with user verification is itself a proof, as the original counts it.
        await recordProof(tx, session.tokenHash, 'passkey', now);
        await writeAudit(tx, { at: now, actor: session.userId, action: 'passkey.register', target: stored.id, requestId: c.var.requestId });
        return stored;
      });
      if (!row) throw new DomainError('passkey_already_bound', 'This passkey is already bound to an account.');
      return c.json(toCredentialView(row), 201);
    })
    .openapi(list, async (c) => {
      const rows = await listCredentials(c.var.deps.database.db, c.var.session.userId);
      return c.json({ credentials: rows.map(toCredentialView) }, 200);
    })
    .openapi(unbind, async (c) => {
      const { deps } = c.var;
      const session = c.var.session;
      const { id } = c.req.valid('param');
      await requireReauth(c);
      const now = deps.clock.now();
      const removed = await deps.database.db.transaction(async (tx) => {
        if (!(await deleteOwnCredential(tx, session.userId, id))) return false;
        await writeAudit(tx, { at: now, actor: session.userId, action: 'passkey.remove', target: id, requestId: c.var.requestId });
        return true;
      });
      if (!removed) throw new DomainError('not_found', 'No passkey of yours has this id.');
      return c.json({ removed: true as const }, 200);
    });
}
