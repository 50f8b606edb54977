import type { Queryable } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { usernameOfActor } from '../accounts/index.js';
import { auditPage, type AuditFilters } from '../audit/index.js';
import { requireAccess, requireServer } from '../servers/index.js';
import type { ActivityQuery, AuditEntryView, AuditQuery } from './schema.js';
import type { ServersParts } from '../servers/index.js';

/** One page of audit rows as the API shows them, each actor with its username (absent: not an account). */
async function auditEntries(db: Queryable, filters: AuditFilters, page: { limit: number; offset: number }) {
  const { rows, total } = await auditPage(db, filters, page, usernameOfActor);
  const entries: AuditEntryView[] = rows.map(({ row, actorName }) => ({
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    actor_username: actorName ?? null,
    action: row.action,
    target: row.target,
    detail: row.detail ?? null,
    request_id: row.requestId,
  }));
  return { entries, total, limit: page.limit, offset: page.offset };
}

const instant = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

/** `GET /audit`: every audited action, filtered, for staff (the route's admin tier). */
export function listAudit(deps: Pick<Deps, 'database'>, query: AuditQuery) {
  return auditEntries(
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
  return auditEntries(db, { target: name, action: query.action, since, until: instant(query.until) }, query);
}
