import { z } from '@hono/zod-openapi';

const DateTime = z.iso.datetime({ offset: true });

/** base64url without padding, as the panel and `PublicKeyCredential.toJSON()` encode bytes. */
const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');
const credentialId = base64url(1366).min(1);

/**
 * What every credential JSON carries, with the members a browser's `toJSON()` adds (the panel
 * leaves those out). Nothing else is accepted.
 */
const credential = {
  id: credentialId,
  rawId: credentialId,
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).optional(),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).nullable().optional(),
};

/** A `navigator.credentials.get()` result (api-extensions: assertion shape). */
export const AssertionSchema = z
  .strictObject({
    ...credential,
    response: z.strictObject({
      clientDataJSON: base64url(8192).min(1),
      authenticatorData: base64url(8192).min(1),
      signature: base64url(2048).min(1),
      userHandle: base64url(128).nullable().optional(),
    }),
  })
  .openapi('PasskeyAssertion');
export type Assertion = z.infer<typeof AssertionSchema>;

/** A `navigator.credentials.create()` result (api-extensions: attestation shape). */
export const AttestationSchema = z
  .strictObject({
    ...credential,
    response: z.strictObject({
      clientDataJSON: base64url(8192).min(1),
      attestationObject: base64url(65536).min(1),
      transports: z.array(z.string().max(32)).max(16).optional(),
      // What toJSON() adds; the attestation object already holds all three.
      authenticatorData: base64url(65536).optional(),
      publicKey: base64url(8192).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
    }),
  })
  .openapi('PasskeyAttestation');
export type Attestation = z.infer<typeof AttestationSchema>;

export const PasskeyCredentialSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    created_at: DateTime,
    aaguid: z.string().optional(),
    last_used_at: DateTime.optional(),
  })
  .openapi('PasskeyCredential');

/** A nickname: trimmed, at most 100 characters, no control characters. */
export const PasskeyNameSchema = z
  .string()
  .max(200)
  .transform((v) => v.trim())
  .pipe(z.string().max(100).regex(/^[^\p{Cc}]*$/u, 'must not contain control characters'));

/** WebAuthn options (creation or request) in their JSON form, passed to the browser verbatim. */
export const WebAuthnOptionsSchema = z.record(z.string(), z.unknown()).openapi('WebAuthnOptions');
