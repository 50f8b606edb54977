import { and, eq, lte } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { worldRounds } from '../../db/schema/world-rounds.js';

/** How long a running round's lease reaches past its last renewal (a dead holder's round frees itself). */
export const ROUND_LEASE_MS = 60_000;
/** How often a running round renews (real time: the holder's process is alive or it is not). */
export const ROUND_RENEW_MS = 15_000;

/**
 * Takes the round `name` for `holder` until `until` when nobody holds it (its lease has passed).
 * One statement: of several replicas asking at once, one wins.
 */
export async function takeRound(db: Queryable, name: string, holder: string, now: Date, until: Date): Promise<boolean> {
  const rows = await db
    .insert(worldRounds)
    .values({ name, holder, leaseUntil: until })
    .onConflictDoUpdate({ target: worldRounds.name, set: { holder, leaseUntil: until }, setWhere: lte(worldRounds.leaseUntil, now) })
    .returning({ holder: worldRounds.holder });
  return rows.length > 0;
}

/** Keeps a running round's lease at least `ROUND_LEASE_MS` ahead of `now`. */
export async function renewRound(db: Queryable, name: string, holder: string, now: Date): Promise<void> {
  const until = new Date(now.getTime() + ROUND_LEASE_MS);
  await db
    .update(worldRounds)
    .set({ leaseUntil: until })
    .where(and(eq(worldRounds.name, name), eq(worldRounds.holder, holder), lte(worldRounds.leaseUntil, until)));
}

/**
 * Runs `round` only if this holder takes the round: the lease covers one interval (so the other
 * replicas' timers skip it) and is renewed while the round runs past it. Resolves whether it ran.
 */
export async function inRound(
  deps: { db: Queryable; now: () => Date; onRenewError: (err: unknown) => void },
  name: string,
  holder: string,
  intervalMs: number,
  round: () => Promise<void>,
): Promise<boolean> {
  const now = deps.now();
  const until = new Date(now.getTime() + Math.max(intervalMs, ROUND_LEASE_MS));
  if (!(await takeRound(deps.db, name, holder, now, until))) return false;
  const timer = setInterval(() => void renewRound(deps.db, name, holder, deps.now()).catch(deps.onRenewError), ROUND_RENEW_MS);
  timer.unref();
  try {
    await round();
  } finally {
    clearInterval(timer);
  }
  return true;
}
