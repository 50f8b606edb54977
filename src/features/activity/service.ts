import { and, count, desc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { users } from '../../db/schema/accounts.js';
import { auditLog } from '../../db/schema/audit.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { requireAccess, requireServer } from '../servers/index.js';
import type { ActivityQuery, AuditEntryView, AuditQuery } from './schema.js';
import type { ServersParts } from '../servers/index.js';

interface Filters {
  actor?: string;
  target?: string;
  action?: string;
  since?: Date;
  until?: Date;
}

/** One page of audit rows, newest first, with the total the filters match. */
async function auditPage(db: Queryable, filters: Filters, page: { limit: number; offset: number }) {
  const where: SQL[] = [];
  if (filters.actor !== undefined) where.push(eq(auditLog.actor, filters.actor));
  if (filters.target !== undefined) where.push(eq(auditLog.target, filters.target));
  if (filters.action !== undefined) where.push(eq(auditLog.action, filters.action));
  if (filters.since) where.push(gte(auditLog.at, filters.since));
  if (filters.until) where.push(lte(auditLog.at, filters.until));
  const condition = where.length > 0 ? and(...where) : undefined;
  const [rows, [total]] = await Promise.all([
    db
      .select({ row: auditLog, username: users.username })
      .from(auditLog)
      .leftJoin(users, sql`${users.id}::text = ${auditLog.actor}`)
      .where(condition)
      .orderBy(desc(auditLog.at), desc(auditLog.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ n: count() }).from(auditLog).where(condition),
  ]);
  const entries: AuditEntryView[] = rows.map(({ row, username }) => ({
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    actor_username: username ?? null,
    action: row.action,
    target: row.target,
    detail: row.detail ?? null,
    request_id: row.requestId,
  }));
  return { entries, total: Number(total?.n ?? 0), limit: page.limit, offset: page.offset };
}

const instant = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

/** `GET /audit`: every audited action, filtered, for staff (the route's admin tier). */
export function listAudit(deps: Pick<Deps, 'database'>, query: AuditQuery) {
  return auditPage(
    deps.database.db,
    { actor: query.actor, target: query.server, action: query.action, since: instant(query.since), until: instant(query.until) },
    query,
  );
}

/**
 * A server's activity: the audited actions whose target is the server. Its owner (and a member
 * with console.read) sees what happened since the owner claimed it (a former owner's history is
 * not theirs to read); staff see all.
 */
export async function serverActivity(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, name: string, session: SessionContext, query: ActivityQuery) {
  await requireServer(deps, name);
  const { db } = deps.database;
  let since = instant(query.since);
  const access = await requireAccess(deps, name, session, 'console.read', `Only ${name}'s owner may read its activity.`);
  if (access.standing !== 'staff') {
    const claimedAt = access.claimedAt;
    if (claimedAt && (!since || since < claimedAt)) since = claimedAt;
  }
  return auditPage(db, { target: name, action: query.action, since, until: instant(query.until) }, query);
}
