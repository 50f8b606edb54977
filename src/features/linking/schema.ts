import { z } from '@hono/zod-openapi';
import { McUuidSchema } from '../accounts/index.js';

export const DateTime = z.iso.datetime({ offset: true });
/** Stored or audited, never put in a command: any text without control characters, bounded. */
export const PrintableText = (max: number) => z.string().regex(/^[^\p{Cc}\p{Cs}]*$/u, 'no control characters').max(max);
/** An opaque handle from a client (a request id): visible ASCII only, so it is safe to look up. */
export const OpaqueId = z.string().regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 visible ASCII characters');
export const AuthSourceSchema = z.enum(['primary', 'thirdparty']);
/** What a player types back: trimmed and upper-cased before it is compared. */
export const TypedCodeSchema = z.string().min(1).max(64).openapi({ example: 'K7QX4M2P' });

export const McUuidParam = z.object({
  mc_uuid: McUuidSchema.openapi({ param: { name: 'mc_uuid', in: 'path' }, example: '069a79f4-44e9-4726-a5be-fca90e38aaf5' }),
});

export const LinkCodeRequest = z.strictObject({ mc_uuid: McUuidSchema, auth_source: AuthSourceSchema.optional() });
export const LinkCodeResponse = z
  .object({ code: z.string(), expires_at: DateTime, panel_url: z.url().optional() })
  .openapi('LinkCode');
export const LinkedResponse = z.object({ linked: z.boolean() });
export const CodeBody = z.strictObject({ code: TypedCodeSchema });
export const LinkVerifiedResponse = z.object({ linked: z.literal(true), mc_uuid: z.uuid(), auth_source: AuthSourceSchema });
export const BoundResponse = LinkVerifiedResponse.extend({ user_id: z.uuid() });
export const LinkStartResponse = z.object({ linked: z.boolean(), instructions: z.string() });
