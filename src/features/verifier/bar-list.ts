import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { barredPlayers } from '../../db/schema/verifier.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';

/** A snapshot younger than this answers alone. */
export const BAR_FRESH_MS = 5_000;
/** Older than FRESH but younger than this, it answers while a refresh runs; older, the login waits. */
export const BAR_MAX_STALE_MS = 10_000;

/**
 * The bar list as hasJoined reads it: an in-memory snapshot of the table. A database round trip
 * per login costs 0.5 to 0.9 ms here (PostgreSQL on loopback, PGlite), the whole latency budget of
 * the verifier, while the list changes only on a reclaim. So a login never sees a list more than
 * BAR_MAX_STALE_MS old (another replica's reclaim reaches this one within that; this replica's own
 * reclaim calls `invalidate()`), and under steady traffic no login waits for the refresh. When the
 * list cannot be read fresh enough the lookup fails, which is the contract's 500: fail closed,
 * never admit on a list we could not read. The whole table is read each time: fine for the tens of
 * thousands of rows reclaim can produce; an incremental read would be the next step beyond that.
 */
export class BarList {
  #snapshot: { barred: Set<string>; at: number } | undefined;
  #refreshing: Promise<Set<string>> | undefined;
  #generation = 0;

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Rejects when the list could not be read fresh enough. */
  async has(mcUuid: string): Promise<boolean> {
    const snapshot = this.#snapshot;
    const age = snapshot ? this.clock.now().getTime() - snapshot.at : Infinity;
    if (snapshot && age < BAR_FRESH_MS) return snapshot.barred.has(mcUuid);
    if (snapshot && age < BAR_MAX_STALE_MS) {
      this.#refresh().catch((err: unknown) => this.log.warn({ err }, 'bar list refresh failed; the snapshot in memory still answers'));
      return snapshot.barred.has(mcUuid);
    }
    return (await this.#refresh()).has(mcUuid);
  }

  /** The next lookup reads the table again (after this replica changed it). */
  invalidate(): void {
    this.#generation += 1;
    this.#snapshot = undefined;
    this.#refreshing = undefined;
  }

  #refresh(): Promise<Set<string>> {
    if (this.#refreshing) return this.#refreshing;
    const refreshing: Promise<Set<string>> = this.#read(this.#generation).finally(() => {
      if (this.#refreshing === refreshing) this.#refreshing = undefined;
    });
    this.#refreshing = refreshing;
    return refreshing;
  }

  /** A read that started before an invalidate() may miss the change: it answers its caller but is not kept. */
  async #read(generation: number): Promise<Set<string>> {
    const started = this.clock.now().getTime();
    const rows = await this.db.select({ mcUuid: barredPlayers.mcUuid }).from(barredPlayers);
    const barred = new Set(rows.map((r) => r.mcUuid));
    if (generation === this.#generation) this.#snapshot = { barred, at: started };
    return barred;
  }
}

/**
 * Bars a player (a reclaim): a new row holds the name until `holdExpiresAt`. Returns the hold's
 * end, and whether this call barred them (false: they were barred already, the first hold stands).
 */
export async function barPlayer(
  db: Queryable,
  bar: { mcUuid: string; username: string; barredAt: Date; holdExpiresAt: Date; dataRef: string | null },
): Promise<{ barred: boolean; holdExpiresAt: Date }> {
  const inserted = await db.insert(barredPlayers).values(bar).onConflictDoNothing().returning({ holdExpiresAt: barredPlayers.holdExpiresAt });
  if (inserted[0]) return { barred: true, holdExpiresAt: inserted[0].holdExpiresAt };
  const [held] = await db.select({ holdExpiresAt: barredPlayers.holdExpiresAt }).from(barredPlayers).where(eq(barredPlayers.mcUuid, bar.mcUuid));
  return { barred: false, holdExpiresAt: held!.holdExpiresAt };
}

/** Whether a player is barred, read from the table itself (not the snapshot), so a reclaim answers at once. */
export async function isBarred(db: Queryable, mcUuid: string): Promise<boolean> {
  const [row] = await db.select({ mcUuid: barredPlayers.mcUuid }).from(barredPlayers).where(eq(barredPlayers.mcUuid, mcUuid)).limit(1);
  return row !== undefined;
}
