import { z } from '@hono/zod-openapi';
import { McUuidSchema } from '../accounts/index.js';
import { DateTime, OpaqueId, PrintableText } from '../linking/index.js';

export const OpLoginIdParam = z.object({
  id: OpaqueId.openapi({ param: { name: 'id', in: 'path' }, example: '0123456789abcdef0123456789abcdef' }),
});

export const PendingOpLogin = z.object({
  request_id: z.string(),
  username: z.string(),
  email: z.string(),
  client_ip: z.string(),
  created_at: DateTime,
});
export const OpLoginDetail = PendingOpLogin.extend({ user_agent: z.string(), expires_at: DateTime }).openapi('OpLoginRequest');

export const ApproverQuery = z.object({
  approver_uuid: McUuidSchema.openapi({ param: { name: 'approver_uuid', in: 'query' } }),
});
export const ApproveBody = z.strictObject({ approver_uuid: McUuidSchema, username: PrintableText(64).min(1) });
export const ApprovedResponse = z.object({ approved: z.literal(true), username: z.string(), email: z.string() });

export const StartBody = z.strictObject({ email: z.email().max(254) });
export const StartedResponse = z.object({ request_id: z.string(), expires_at: DateTime });
export const FinishBody = z.strictObject({ request_id: OpaqueId, code: z.string().min(1).max(64) });
