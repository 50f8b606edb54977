import type { PendingRequest } from './service.js';

/** A pending request in the proxy's list (no user agent: the list is shown to every approver). */
export const toPendingView = (row: PendingRequest) => ({
  request_id: row.request_id,
  username: row.username,
  email: row.email,
  client_ip: row.client_ip,
  created_at: row.createdAt.toISOString(),
});

/** One request, for the approver about to approve it (OpLoginRequest). */
export const toRequestDetail = (row: PendingRequest) => ({
  request_id: row.request_id,
  username: row.username,
  email: row.email,
  client_ip: row.client_ip,
  user_agent: row.user_agent,
  created_at: row.createdAt.toISOString(),
  expires_at: row.expiresAt.toISOString(),
});
