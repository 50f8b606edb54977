import { z } from '@hono/zod-openapi';

export const RoleSchema = z.enum(['owner', 'admin', 'user']);
/** Sign-in answers report staff as `admin` (contract: role 'user'|'admin'). */
export const SignInRoleSchema = z.enum(['user', 'admin']);

export const EmailSchema = z.email().max(254).openapi({ example: 'alex@example.com' });
export const UsernameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{2,31}$/, 'must be 3 to 32 letters, digits, `_`, `.` or `-`')
  .openapi({ example: 'alex' });
const DateTime = z.iso.datetime({ offset: true });

export const UserViewSchema = z
  .object({
    id: z.uuid(),
    username: z.string(),
    email: z.string().optional(),
    role: RoleSchema,
    disabled: z.boolean(),
    email_verified: z.boolean(),
    server_count: z.number().int(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .openapi('UserView');

export const LinkedAccountSchema = z.object({
  mc_uuid: z.uuid(),
  auth_source: z.string(),
  verified_at: DateTime,
});

export const UserDetailSchema = UserViewSchema.extend({
  deleted_at: DateTime.optional(),
  linked_accounts: z.array(LinkedAccountSchema).optional(),
}).openapi('UserDetail');

/** Limits of a quota: a whole number, or null for unlimited. */
export const QuotaLimitSchema = z.number().int().min(0).max(2_147_483_647).nullable();
export const QuotaViewSchema = z
  .object({
    user_id: z.uuid(),
    max_servers: QuotaLimitSchema,
    max_cpu_milli: QuotaLimitSchema,
    max_memory_mb: QuotaLimitSchema,
    max_storage_gb: QuotaLimitSchema,
  })
  .openapi('QuotaView');

export const SessionViewSchema = z
  .object({
    token_hash: z.string(),
    created_at: DateTime,
    expires_at: DateTime,
    last_seen_at: DateTime,
    user_agent: z.string(),
    client_ip: z.string(),
    revoked_at: DateTime.optional(),
    current: z.boolean().optional(),
  })
  .openapi('SessionView');

export const SessionListSchema = z.object({ sessions: z.array(SessionViewSchema) });

export const MeSchema = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    /** Always present: "" when the account has no address (as the original). */
    email: z.string(),
    email_verified: z.boolean(),
    role: SignInRoleSchema,
    is_admin: z.boolean(),
    is_owner: z.boolean(),
    must_change_password: z.boolean(),
    setup_required: z.boolean(),
  })
  .openapi('Me');

export const TokenHashParam = z.object({
  token_hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha-256 in hex').openapi({ param: { name: 'token_hash', in: 'path' } }),
});

export const UserIdParam = z.object({
  id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }),
});

export const RevokedSchema = z.object({ revoked: z.literal(true) });
/** The original's answer to revoking one of my sessions: `signed_out` when it was this one. */
export const OwnSessionRevokedSchema = z.object({ ok: z.literal(true), signed_out: z.boolean() });

/** A player UUID, dashed or not, any case; normalized to the dashed lower-case form. */
export const McUuidSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/, 'must be a UUID')
  .transform((v) => {
    const hex = v.replaceAll('-', '').toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  })
  .openapi({ type: 'string', example: '069a79f4-44e9-4726-a5be-fca90e38aaf5' });

export const OkSchema = z.object({ ok: z.literal(true) });
