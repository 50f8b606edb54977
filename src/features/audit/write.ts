import type { Queryable } from '../../db/client.js';
import { auditLog } from '../../db/schema/audit.js';
import type { RequestChange } from '../../http/env.js';

/**
 * Who did it: a user as its request's session gave it (the session context: its user id and, when
 * the request came with an API key, the key), or the name of the service's own part (`system`,
 * `proxy`, `ops:…`, `mc:…`) or a user id where no API key can stand behind it (admin tier, sign-in
 * flows). A user who acted through a key is written as the actor with the key's id in the details
 * (issue 42): here, once, for every feature's row.
 */
export type AuditActor = string | { userId: string; apiKey?: { id: string } };

export interface AuditEntry {
  at: Date;
  actor: AuditActor;
  action: string;
  target?: string | null;
  detail?: Record<string, unknown> | null;
  /** The request that did it; none for the service's own work (a sweep, a job). */
  requestId?: string | null;
}

/** Records one audited action; pass the caller's transaction so the record commits with the change. */
export async function writeAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  const by = typeof entry.actor === 'string' ? undefined : entry.actor;
  await db.insert(auditLog).values({
    at: entry.at,
    actor: by === undefined ? (entry.actor as string) : by.userId,
    action: entry.action,
    target: entry.target ?? null,
    detail: by?.apiKey ? { ...entry.detail, api_key_id: by.apiKey.id } : (entry.detail ?? null),
    requestId: entry.requestId ?? null,
  });
}

/** What the change recorder needs: the database, the clock that stamps the row, a log for a lost row. */
export interface RecorderDeps {
  database: { db: Queryable };
  clock: { now(): Date };
  log: { warn(obj: object, msg: string): void };
}

/**
 * The front door's record of every signed-in request that changed something: one row with the
 * actor, the request id, the route (`POST /api/v1/servers/:name/wake` as the action, the pattern the metrics label too) and its
 * target (the route's `name` or `id`, else its first parameter). Written beside the answer, never
 * delaying it; a row that cannot be written is a warning in the log (the change already happened).
 * Features still write their own rows, with the detail of what changed, in their transaction.
 */
export function changeRecorder(deps: RecorderDeps): (change: RequestChange) => void {
  return (change) => {
    const params = change.params;
    const target = params.name ?? params.id ?? Object.values(params)[0] ?? null;
    writeAudit(deps.database.db, {
      at: deps.clock.now(),
      actor: change.actor,
      action: `${change.method} ${change.route}`,
      target,
      detail: { status: change.status, ...(Object.keys(params).length > 0 ? { params } : {}) },
      requestId: change.requestId,
    }).catch((err: unknown) => deps.log.warn({ err, request_id: change.requestId, action: `${change.method} ${change.route}` }, 'audit row of a request not written'));
  };
}

/**
 * The audit feature's part of the service: the front door's change recorder (`given` replaces it;
 * a recorder given as undefined records nothing).
 */
export function createAuditParts(
  infrastructure: RecorderDeps,
  given: { recordChange?: ((change: RequestChange) => void) | undefined } = {},
): { recordChange: ((change: RequestChange) => void) | undefined } {
  return { recordChange: 'recordChange' in given ? given.recordChange : changeRecorder(infrastructure) };
}
