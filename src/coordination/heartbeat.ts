import { and, eq, like } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';
import { leases } from '../db/schema/coordination.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { LEASE_KEYS, leasePrefix } from './leases.js';
import type { BackgroundTask } from './loops.js';

/**
 * A replica's heartbeat: the lease `replica:<replica>` (one per process life: the replica's name
 * carries a random part, so a pod that comes back with the same POD_NAME never revives its old
 * life), renewed every `beatMs`. Each replica also watches the others' heartbeats and judges one
 * dead by LOCAL OBSERVATION only, as the leader leases do (loops.ts `Leadership`): it notes, by
 * its own clock, when it last saw a heartbeat change, and calls it dead once it has stood still
 * across its own successful reads for a whole TTL, or has vanished (a goodbye, or the next life
 * of its pod removed it). Another node's clock is never compared with this one's, so clock skew
 * cannot make a living replica look dead.
 *
 * What a dead replica took for work in its own process (a world lock's `replica`) is then free at
 * once (leases.ts `freeLease`), and the watcher that judged it dead releases the rounds of
 * one-replica loops it held (loops.ts), so no round waits out a dead holder's lease. A replica cut off from the database stops acting first: its own
 * heartbeat is "lost" once `renewDeadlineMs` passed without a renewal, which aborts the signals
 * handed out by `whileAlive()`, before anyone else can have watched it stand still for the TTL.
 */

/** How long a heartbeat must stand still (by the watcher's clock) before its replica counts as dead. */
export const HEARTBEAT_TTL_MS = 10_000;
/** How often a replica renews its heartbeat and reads the others'. */
export const HEARTBEAT_BEAT_MS = 2_000;
/** A replica that could not renew for this long stops acting on what it holds (shorter than the TTL). */
export const HEARTBEAT_RENEW_DEADLINE_MS = 7_000;
/** A heartbeat dead this long is removed by the replica that watched it (its locks lapsed by then). */
export const HEARTBEAT_FORGET_MS = 5 * 60_000;

export interface HeartbeatDeps {
  db: Queryable;
  clock: Clock;
  log: Pick<Logger, 'warn' | 'info'>;
  /** This process's name as a lease holder (unique per life). */
  replica: string;
}

export interface HeartbeatOptions {
  ttlMs?: number;
  beatMs?: number;
  renewDeadlineMs?: number;
  forgetMs?: number;
}

interface Watched {
  /** The heartbeat's `lease_until` as last read (only ever compared with itself). */
  leaseUntil: number;
  /** When this replica first read that value (its own clock). */
  seenAt: number;
  /** When a read first missed it (its own clock): vanished, dead at once. */
  goneAt?: number;
}

export class ReplicaHeartbeat {
  readonly #deps: HeartbeatDeps;
  readonly #ttlMs: number;
  readonly #beatMs: number;
  readonly #renewDeadlineMs: number;
  readonly #forgetMs: number;
  readonly #key: string;
  /** When this replica last renewed its own heartbeat (its clock). */
  #renewedAt: number | undefined;
  /** When this replica last read every heartbeat (its clock). */
  #readAt: number | undefined;
  #lost = false;
  readonly #watched = new Map<string, Watched>();
  readonly #announced = new Set<string>();
  readonly #holders = new Set<AbortController>();
  readonly #listeners = new Set<(replica: string) => void>();

  constructor(deps: HeartbeatDeps, options: HeartbeatOptions = {}) {
    this.#deps = deps;
    this.#ttlMs = options.ttlMs ?? HEARTBEAT_TTL_MS;
    this.#beatMs = options.beatMs ?? HEARTBEAT_BEAT_MS;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? HEARTBEAT_RENEW_DEADLINE_MS;
    this.#forgetMs = options.forgetMs ?? HEARTBEAT_FORGET_MS;
    this.#key = LEASE_KEYS.replica(deps.replica);
  }

  get replica(): string {
    return this.#deps.replica;
  }

  /** Renews this replica's heartbeat, then reads and judges the others'. Rejects when the database does not answer. */
  async beat(): Promise<void> {
    const { db, clock, replica } = this.#deps;
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + this.#ttlMs);
    await db
      .insert(leases)
      .values({ key: this.#key, holder: replica, purpose: 'heartbeat', acquiredAt: now, leaseUntil, replica: null })
      .onConflictDoUpdate({ target: leases.key, set: { leaseUntil }, setWhere: eq(leases.holder, replica) });
    this.#renewedAt = now.getTime();
    if (this.#lost) {
      this.#lost = false;
      this.#deps.log.info({ replica }, 'the heartbeat is renewed again');
    }
    const rows = await db.select({ holder: leases.holder, leaseUntil: leases.leaseUntil }).from(leases).where(like(leases.key, `${leasePrefix('replica')}%`));
    for (const holder of this.#observe(clock.now().getTime(), rows)) {
      // The rounds of one-replica loops it held (their lease reaches a minute past its last round)
      // are free now: a survivor runs the next one at its own next tick (issue 43: a retirement
      // asked of the survivor waited for the dead replica's round lease).
      await db.delete(leases).where(and(like(leases.key, `${leasePrefix('loop')}%`), eq(leases.holder, holder)));
    }
  }

  /** Notes what the read saw; answers the replicas judged dead by it (each once). */
  #observe(readAt: number, rows: { holder: string; leaseUntil: Date }[]): string[] {
    this.#readAt = readAt;
    const present = new Set<string>();
    for (const row of rows) {
      if (row.holder === this.#deps.replica) continue;
      present.add(row.holder);
      const until = row.leaseUntil.getTime();
      const seen = this.#watched.get(row.holder);
      if (!seen || seen.leaseUntil !== until || seen.goneAt !== undefined) {
        this.#watched.set(row.holder, { leaseUntil: until, seenAt: readAt });
        this.#announced.delete(row.holder);
      }
    }
    for (const [holder, seen] of this.#watched) {
      if (!present.has(holder) && seen.goneAt === undefined) seen.goneAt = readAt;
    }
    const died: string[] = [];
    for (const holder of this.deadReplicas()) {
      if (this.#announced.has(holder)) continue;
      this.#announced.add(holder);
      died.push(holder);
      this.#deps.log.warn({ replica: holder }, 'a replica\'s heartbeat stood still for its TTL: what it held in its own process is free');
      for (const listener of this.#listeners) listener(holder);
    }
    return died;
  }

  /**
   * The replicas this one has seen die: a heartbeat unchanged across this replica's reads for a
   * whole TTL, or one that vanished after it was seen. Judged only from successful reads, so a
   * replica that could not read for a while judges nobody dead for it.
   */
  deadReplicas(): string[] {
    const readAt = this.#readAt;
    if (readAt === undefined) return [];
    const dead: string[] = [];
    for (const [holder, seen] of this.#watched) {
      if (seen.goneAt !== undefined || readAt - seen.seenAt >= this.#ttlMs) dead.push(holder);
    }
    return dead;
  }

  /** Calls `listener` once for each replica judged dead; resolves the unsubscribe. */
  onDeath(listener: (replica: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Whether this replica renewed its heartbeat within the renew deadline (it never did: false). */
  alive(): boolean {
    return this.#renewedAt !== undefined && this.#deps.clock.now().getTime() - this.#renewedAt < this.#renewDeadlineMs;
  }

  /**
   * A signal aborted when this replica's heartbeat is lost (no renewal for the renew deadline):
   * work under a lock it took for itself stops before any other replica may take that lock over.
   */
  whileAlive(): AbortSignal {
    const holder = new AbortController();
    if (this.#lost) holder.abort(new HeartbeatLost(this.#renewDeadlineMs));
    else this.#holders.add(holder);
    return holder.signal;
  }

  /** Turns the heartbeat lost once its last renewal is older than the renew deadline. */
  check(): void {
    if (this.#lost || this.#renewedAt === undefined || this.alive()) return;
    this.#lost = true;
    this.#deps.log.warn({ replica: this.#deps.replica, renew_deadline_ms: this.#renewDeadlineMs }, 'the heartbeat could not be renewed: work under this replica\'s own locks stops');
    const reason = new HeartbeatLost(this.#renewDeadlineMs);
    for (const holder of this.#holders) holder.abort(reason);
    this.#holders.clear();
  }

  /** Removes the heartbeats dead for `forgetMs`, if they are still the version watched. */
  async forget(): Promise<void> {
    const readAt = this.#readAt;
    if (readAt === undefined) return;
    for (const [holder, seen] of this.#watched) {
      const deadSince = seen.goneAt ?? seen.seenAt;
      if (readAt - deadSince < this.#forgetMs) continue;
      if (seen.goneAt === undefined) {
        await this.#deps.db
          .delete(leases)
          .where(and(eq(leases.key, LEASE_KEYS.replica(holder)), eq(leases.holder, holder), eq(leases.leaseUntil, new Date(seen.leaseUntil))));
      }
      this.#watched.delete(holder);
      this.#announced.delete(holder);
    }
  }

  /** Says goodbye: removes this replica's heartbeat, so that the others count it gone at once. */
  async goodbye(): Promise<void> {
    await this.#deps.db.delete(leases).where(and(eq(leases.key, this.#key), eq(leases.holder, this.#deps.replica)));
  }

  /** The heartbeat as a background task: beats every `beatMs` (real time), says goodbye at stop. */
  task(): BackgroundTask {
    let timer: NodeJS.Timeout | undefined;
    let beating: Promise<void> | undefined;
    const tick = () => {
      this.check();
      if (beating) return; // a beat that hangs is not doubled; the deadline still runs
      beating = this.beat()
        .then(() => this.forget())
        .catch((err: unknown) => this.#deps.log.warn({ err, replica: this.#deps.replica }, 'heartbeat renewal failed'))
        .finally(() => (beating = undefined));
    };
    return {
      name: 'replica_heartbeat',
      start: () => {
        tick();
        timer = setInterval(tick, this.#beatMs);
        timer.unref();
      },
      stop: async () => {
        clearInterval(timer);
        await beating;
        await this.goodbye().catch((err: unknown) => this.#deps.log.warn({ err }, 'heartbeat goodbye failed; the others count it dead after its TTL'));
      },
    };
  }
}

/** The reason of a `whileAlive()` signal: this replica lost its heartbeat. */
export class HeartbeatLost extends Error {
  override name = 'HeartbeatLost';
  constructor(deadlineMs: number) {
    super(`this replica could not renew its heartbeat for ${deadlineMs / 1000} s: it stops acting on what it holds`);
  }
}
