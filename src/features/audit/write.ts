import type { Queryable } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';

export interface AuditEntry {
  at: Date;
  /** The user id of who did it (or `system`). */
  actor: string;
  action: string;
  target?: string | null;
  detail?: Record<string, unknown> | null;
  /** The request that did it; none for the service's own work (a sweep, a job). */
  requestId?: string | null;
}

/** Records one audited action; pass the caller's transaction so the record commits with the change. */
export async function writeAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values({
    at: entry.at,
    actor: entry.actor,
    action: entry.action,
    target: entry.target ?? null,
    detail: entry.detail ?? null,
    requestId: entry.requestId ?? null,
  });
}
