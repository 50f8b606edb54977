import type { InferSelectModel } from 'drizzle-orm';
import type { sessions, users } from '../../db/schema/accounts.js';

type UserRow = InferSelectModel<typeof users>;
type SessionRow = InferSelectModel<typeof sessions>;

export function toUserView(row: UserRow, serverCount: number) {
  return {
    id: row.id,
    username: row.username,
    ...(row.email !== null ? { email: row.email } : {}),
    role: row.role,
    disabled: row.disabled,
    email_verified: row.emailVerified,
    server_count: serverCount,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function toUserDetail(
  row: UserRow,
  serverCount: number,
  links: Array<{ mcUuid: string; authSource: string; verifiedAt: Date }>,
) {
  return {
    ...toUserView(row, serverCount),
    ...(row.deletedAt !== null ? { deleted_at: row.deletedAt.toISOString() } : {}),
    ...(links.length > 0
      ? { linked_accounts: links.map((l) => ({ mc_uuid: l.mcUuid, auth_source: l.authSource, verified_at: l.verifiedAt.toISOString() })) }
      : {}),
  };
}

export function toSessionView(row: SessionRow, currentHash?: string) {
  return {
    token_hash: row.tokenHash,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    last_seen_at: row.lastSeenAt.toISOString(),
    user_agent: row.userAgent,
    client_ip: row.clientIp,
    ...(row.revokedAt !== null ? { revoked_at: row.revokedAt.toISOString() } : {}),
    ...(currentHash !== undefined ? { current: row.tokenHash === currentHash } : {}),
  };
}
