import type { Queryable } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';

export interface AuditEntry {
  at: Date;
  /** The user id of who did it (or `system`). */
  actor: string;
  action: string;
  target?: string;
  detail?: Record<string, unknown>;
  requestId?: string;
}

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
