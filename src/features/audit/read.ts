import { and, count, desc, eq, gte, lte, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';

export type AuditRow = typeof auditLog.$inferSelect;

export interface AuditFilters {
  actor?: string;
  target?: string;
  action?: string;
  since?: Date;
  until?: Date;
}

/**
 * One page of audit rows, newest first, with the total the filters match (two statements, run
 * together). `actorName` names each row's actor in the same statement: the accounts feature gives
 * it (`usernameOfActor`), since the audit log names its actors by id and knows no account.
 */
export async function auditPage(
  db: Queryable,
  filters: AuditFilters,
  page: { limit: number; offset: number },
  actorName: (actor: AnyColumn) => SQL<string | null>,
): Promise<{ rows: { row: AuditRow; actorName: string | null }[]; total: number }> {
  const where: SQL[] = [];
  if (filters.actor !== undefined) where.push(eq(auditLog.actor, filters.actor));
  if (filters.target !== undefined) where.push(eq(auditLog.target, filters.target));
  if (filters.action !== undefined) where.push(eq(auditLog.action, filters.action));
  if (filters.since) where.push(gte(auditLog.at, filters.since));
  if (filters.until) where.push(lte(auditLog.at, filters.until));
  const condition = where.length > 0 ? and(...where) : undefined;
  const [rows, [total]] = await Promise.all([
    db
      .select({ row: auditLog, actorName: actorName(auditLog.actor) })
      .from(auditLog)
      .where(condition)
      .orderBy(desc(auditLog.at), desc(auditLog.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ n: count() }).from(auditLog).where(condition),
  ]);
  return { rows, total: Number(total?.n ?? 0) };
}
