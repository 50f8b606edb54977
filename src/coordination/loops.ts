import { and, eq } from 'drizzle-orm';
import type { Queryable } from '../db/client.js';
import { leases } from '../db/schema/coordination.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { holdLease, LEASE_KEYS, leaseOf, releaseLease, takeLease } from './leases.js';

/**
 * Work that runs beside the requests (sweeps, rounds, watches, the controller). Features make their
 * tasks and hand them to the composition root (src/service.ts), which starts them in order once
 * the service is ready and stops them in the reverse order before the database closes.
 */
export interface BackgroundTask {
  readonly name: string;
  start(): void;
  /** Stops scheduling and resolves when a round under way has ended. */
  stop(): Promise<void>;
  /**
   * A task that closes what its feature made (a cache's watch, the followed pod logs, keep-alive
   * sockets): such objects start on their first use, which may come before the list starts (a
   * service still waiting for its database serves its routes), so the list stops it even when it
   * never started. Made by `closingTask`.
   */
  readonly closes?: true;
}

/** The task that closes an object its feature made (see `BackgroundTask.closes`): nothing to start. */
export function closingTask(name: string, close: () => void | Promise<void>): BackgroundTask {
  return {
    name,
    closes: true,
    start() {},
    async stop() {
      await close();
    },
  };
}

/** What a loop needs: the database its leases live in, the clock, the log, and this replica's name. */
export interface LoopDeps {
  db: Queryable;
  clock: Clock;
  log: Pick<Logger, 'warn' | 'info'>;
  /** This replica's name as a lease holder (unique per process). */
  replica: string;
}

export interface LoopOptions {
  name: string;
  /**
   * `every`: each replica runs each round (idempotent work over what each replica sees).
   * `one`: a round runs on one replica only; the replica that takes the round's lease runs it and
   * the lease covers the interval, so the other replicas' timers skip it.
   */
  replicas: 'one' | 'every';
  /** The pause between rounds, read again after each round (a setting may change it). */
  intervalMs: number | (() => Promise<number>);
  /** The first round, this long after start (default: one interval). */
  firstAfterMs?: number;
  round: () => Promise<void>;
}

/** How long a running round's lease reaches past its last renewal: a dead holder's round frees itself. */
export const ROUND_LEASE_MS = 60_000;
/** How often a running round renews its lease (real time: the holder's process is alive or it is not). */
export const ROUND_RENEW_MS = 15_000;

/**
 * Runs `round` only if this replica takes the round named `name`: the lease covers one interval
 * (at least ROUND_LEASE_MS) and is renewed while the round runs past it. Resolves whether it ran.
 */
export async function runOnOneReplica(deps: LoopDeps, name: string, intervalMs: number, round: () => Promise<void>): Promise<boolean> {
  const key = LEASE_KEYS.loop(name);
  const ttlMs = Math.max(intervalMs, ROUND_LEASE_MS);
  if (!(await takeLease(deps.db, deps.clock.now(), { key, holder: deps.replica, purpose: name, ttlMs }))) return false;
  // Renewal keeps ROUND_LEASE_MS ahead (never shortening the interval's reach) while the round runs.
  const held = holdLease({ db: deps.db, clock: deps.clock, log: deps.log }, { key, holder: deps.replica, ttlMs: ROUND_LEASE_MS }, ROUND_RENEW_MS);
  try {
    await round();
  } finally {
    held.abandon();
  }
  return true;
}

/** A loop as a background task: each round's failure is logged and the loop goes on. */
export function backgroundLoop(deps: LoopDeps, options: LoopOptions): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  const interval = async () => (typeof options.intervalMs === 'number' ? options.intervalMs : options.intervalMs());

  const once = async () => {
    try {
      if (options.replicas === 'every') await options.round();
      else await runOnOneReplica(deps, options.name, await interval(), options.round);
    } catch (err) {
      deps.log.warn({ err, task: options.name }, 'background round failed; tried again next round');
    }
  };
  const schedule = (afterMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = (async () => {
        await once();
        const next = await interval().catch(() => undefined);
        schedule(next ?? (typeof options.intervalMs === 'number' ? options.intervalMs : 60_000));
      })();
    }, afterMs);
    timer.unref();
  };

  return {
    name: options.name,
    start() {
      stopped = false;
      void (async () => schedule(options.firstAfterMs ?? (await interval().catch(() => 60_000))))();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * The right to act for the whole control plane (the lifecycle controller, build log copies, webhook
 * delivery): a lease held for as long as the holder keeps renewing it. `acquire()` takes or renews
 * it (a round trip); `holds()` answers from the last renewal without one and turns false by itself
 * once that renewal is older than the renew deadline, so a replica cut off from the database stops
 * acting before another can take over (the lease lasts longer than the deadline).
 *
 * A follower never compares the record's `lease_until` (written by the leader's clock) with its own
 * clock: like client-go's leader election it notes when it last saw the record change (the
 * leader's renewals move `lease_until`), and takes over only once the record has stood still for a
 * whole lease by its own clock, and then only if it is still the version it watched (one
 * statement). A replica whose clock runs ahead or behind can therefore not take over early.
 */
export class Leadership {
  readonly #deps: Pick<LoopDeps, 'db' | 'clock' | 'replica'>;
  readonly #key: string;
  readonly #leaseMs: number;
  readonly #renewDeadlineMs: number;
  #renewedAt: number | undefined;
  /** The other holder's record as this replica last saw it change, and when (this replica's clock). */
  #observed: { holder: string; leaseUntil: Date; seenAt: number } | undefined;

  constructor(deps: Pick<LoopDeps, 'db' | 'clock' | 'replica'>, options: { name: string; leaseMs?: number; renewDeadlineMs?: number }) {
    this.#deps = deps;
    this.#key = LEASE_KEYS.leader(options.name);
    this.#leaseMs = options.leaseMs ?? 10_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 7_000;
  }

  holds(): boolean {
    return this.#renewedAt !== undefined && this.#deps.clock.now().getTime() - this.#renewedAt < this.#renewDeadlineMs;
  }

  async acquire(): Promise<boolean> {
    const now = this.#deps.clock.now();
    try {
      const won = await this.#takeOrRenew(now);
      this.#renewedAt = won ? now.getTime() : undefined;
      return won;
    } catch {
      // The database cannot be reached: keep leading only until the renew deadline passes.
      return this.holds();
    }
  }

  async #takeOrRenew(now: Date): Promise<boolean> {
    const { db, replica } = this.#deps;
    const leaseUntil = new Date(now.getTime() + this.#leaseMs);
    const record = { holder: replica, purpose: 'leader', acquiredAt: now, leaseUntil, replica: null };
    // A free lease is taken, this replica's own renewed; another's is left alone here.
    const mine = await db
      .insert(leases)
      .values({ key: this.#key, ...record })
      .onConflictDoUpdate({ target: leases.key, set: { leaseUntil }, setWhere: eq(leases.holder, replica) })
      .returning({ holder: leases.holder });
    if (mine.length > 0) {
      this.#observed = undefined;
      return true;
    }
    const seen = await leaseOf(db, this.#key);
    if (!seen) return false; // released meanwhile: the next round takes it
    const watched = this.#observed;
    if (!watched || watched.holder !== seen.holder || watched.leaseUntil.getTime() !== seen.leaseUntil.getTime()) {
      this.#observed = { holder: seen.holder, leaseUntil: seen.leaseUntil, seenAt: now.getTime() };
      return false;
    }
    if (now.getTime() - watched.seenAt < this.#leaseMs) return false;
    // Unchanged for a whole lease by this replica's clock: its holder stopped renewing.
    this.#observed = undefined;
    const taken = await db
      .update(leases)
      .set(record)
      .where(and(eq(leases.key, this.#key), eq(leases.holder, seen.holder), eq(leases.leaseUntil, seen.leaseUntil)))
      .returning({ holder: leases.holder });
    return taken.length > 0;
  }

  async release(): Promise<void> {
    if (this.#renewedAt === undefined) return;
    this.#renewedAt = undefined;
    await releaseLease(this.#deps.db, this.#key, this.#deps.replica).catch(() => undefined);
  }
}

/** The service's background tasks, started in the order added and stopped in the reverse order. */
export class TaskList {
  readonly #tasks: BackgroundTask[] = [];
  #started = false;
  #stopped = false;

  constructor(private readonly log: Pick<Logger, 'warn'>) {}

  add(...tasks: BackgroundTask[]): this {
    this.#tasks.push(...tasks);
    return this;
  }

  start(): void {
    this.#started = true;
    this.#stopped = false;
    for (const task of this.#tasks) task.start();
  }

  /**
   * Stops the started tasks in the reverse order; a closing task is stopped even if the list never
   * started. A second stop does nothing.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    const started = this.#started;
    this.#started = false;
    for (const task of [...this.#tasks].reverse()) {
      if (!started && !task.closes) continue;
      await task.stop().catch((err: unknown) => this.log.warn({ err, task: task.name }, 'a background task did not stop cleanly'));
    }
  }
}
