import { z } from '@hono/zod-openapi';
import { PageQuery } from '../../http/paging.js';

/** The instants a timestamp column holds: years 1 to 9999 in UTC (year 0 and beyond are refused by the database). */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');
const Instant = z.iso
  .datetime({ offset: true })
  .refine((v) => Date.parse(v) >= FIRST_INSTANT && Date.parse(v) <= LAST_INSTANT, { message: 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z' })
  .openapi({ example: '2026-06-01T12:00:00Z' });

/** The staff's filters of `GET /audit`: exact actor (a user id, `system`, …), server, action; a time window. */
export const AuditQuery = z
  .strictObject({
    actor: z.string().min(1).max(128).optional(),
    server: z.string().min(1).max(128).optional(),
    action: z.string().min(1).max(128).optional(),
    since: Instant.optional(),
    until: Instant.optional(),
    ...PageQuery,
  })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) <= Date.parse(q.until), { message: 'since must not be after until', path: ['since'] });
export type AuditQuery = z.infer<typeof AuditQuery>;

/** A server's activity for its owner: a time window and paging. */
export const ActivityQuery = z
  .strictObject({ since: Instant.optional(), until: Instant.optional(), action: z.string().min(1).max(128).optional(), ...PageQuery })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) <= Date.parse(q.until), { message: 'since must not be after until', path: ['since'] });
export type ActivityQuery = z.infer<typeof ActivityQuery>;

export const AuditEntrySchema = z
  .object({
    id: z.string(),
    at: z.string().openapi({ format: 'date-time' }),
    actor: z.string().openapi({ description: 'A user id, or `system`, `break-glass` or an operator name for the service\'s own work' }),
    actor_username: z.string().nullable(),
    action: z.string(),
    target: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()).nullable(),
    request_id: z.string().nullable(),
  })
  .openapi('AuditEntry');
export type AuditEntryView = z.infer<typeof AuditEntrySchema>;

export const AuditPageSchema = z
  .object({ entries: z.array(AuditEntrySchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .openapi('AuditPage');
