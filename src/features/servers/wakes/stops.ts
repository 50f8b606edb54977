import { eq } from 'drizzle-orm';
import { lockForTransaction } from '../../../coordination/index.js';
import type { Queryable } from '../../../db/client.js';
import { serverStops } from '../../../db/schema/servers.js';
import type { Deps } from '../../../deps.js';

/**
 * Explicit stops (the panel's stop, the emergency stop). Each is recorded before the cluster is
 * asked, under the capacity lock: a start on someone's behalf that checks for a later stop under the
 * same lock (`startWithinCapacity` with `unlessStoppedSince`) either ran whole before the record,
 * so the stop that follows ends it, or sees the record and does not start. A stop is never undone.
 */
export type StopKind = 'stop' | 'emergency_stop';
export type ExplicitStop = typeof serverStops.$inferSelect;

export async function recordExplicitStop(deps: Pick<Deps, 'database' | 'clock'>, name: string, by: string, kind: StopKind): Promise<void> {
  await deps.database.db.transaction(async (tx) => {
    await lockForTransaction(tx, 'capacity');
    const row = { serverName: name, stoppedAt: deps.clock.now(), stoppedBy: by, kind };
    await tx.insert(serverStops).values(row).onConflictDoUpdate({ target: serverStops.serverName, set: row });
  });
}

/** The explicit stop of `name` made at or after `since`, if any. */
export async function explicitStopSince(db: Queryable, name: string, since: Date): Promise<ExplicitStop | undefined> {
  const [row] = await db.select().from(serverStops).where(eq(serverStops.serverName, name));
  return row && row.stoppedAt.getTime() >= since.getTime() ? row : undefined;
}

export const stopWords = (stop: ExplicitStop) => (stop.kind === 'emergency_stop' ? 'an emergency stop' : 'an explicit stop');
