import { performance } from 'node:perf_hooks';
import type { ChangeFeed } from '../../../db/change-feed.js';

/** How many rows one cache of a replica keeps; past it the oldest goes. */
const CACHE_ENTRIES = 10_000;

/**
 * The rows of the checks that passed (a session by its token's hash, an API key by its secret's
 * hash), each with when it was read (monotonic ms): a signed-in request whose row is cached costs
 * no query. Every check still runs on the row against the request (expiry, host, role, tier,
 * scope, setup, idle); only the read is saved. What keeps revocation sound:
 * - on this replica, every answered write request forgets everything (the front door's AnsweredWrites, src/http/pipeline.ts), and a
 *   read that was in flight across a forget is not kept (the epoch), so a sign-out, revoke,
 *   disable or role change counts from the next request;
 * - another replica's change reaches this one through the database's change feed
 *   (src/db/change-feed.ts: a trigger's NOTIFY on sessions, users, api_keys, LISTENed to), which
 *   forgets everything; cached rows are used only while the feed can say that every change
 *   committed more than `SESSION_CACHE_MS` (≤ 1 s) ago has been delivered. Without a feed (the
 *   tests' in-process PGlite), a row is used for at most `SESSION_CACHE_MS` after its read.
 * One per kind of row and replica (the authenticator makes them), never module-level. It listens
 * to the feed from its first read (before that it holds nothing to forget) until `close()`, after
 * which it keeps nothing and every read goes to the database.
 */
export class CheckedRows<Row> {
  #rows = new Map<string, { row: Row; readAt: number }>();
  #epoch = 0;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(readonly feed: ChangeFeed | undefined) {}

  /** Stops listening to the feed and keeps no row from now on (the accounts module's closing task). */
  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.forgetAll();
  }

  #get(hash: string, maxAgeMs: number): Row | undefined {
    const hit = this.#rows.get(hash);
    if (hit === undefined) return undefined;
    const now = performance.now();
    if (now - (this.feed ? this.feed.seenThrough() : hit.readAt) < maxAgeMs) return hit.row;
    if (!this.feed) this.#rows.delete(hash);
    return undefined;
  }

  /** Keeps a row read at `readAt` when no forget happened since the read began (`epoch`). */
  #keep(hash: string, row: Row, epoch: number, readAt: number): void {
    if (epoch !== this.#epoch) return;
    if (this.#rows.size >= CACHE_ENTRIES && !this.#rows.has(hash)) {
      this.#rows.delete(this.#rows.keys().next().value!);
    }
    this.#rows.set(hash, { row, readAt });
  }

  drop(hash: string): void {
    this.#rows.delete(hash);
  }

  forgetAll(): void {
    this.#epoch++;
    this.#rows.clear();
  }

  /**
   * The cached row, synchronously, when caching is on (`maxAgeMs` > 0), it is fresh enough and
   * `fresh` takes it; else a promise of the row `read` finds, kept when there is one and caching is
   * on. Synchronous on a hit, so that a signed-in read from the cache makes no promise of its own.
   */
  read(hash: string, maxAgeMs: number, read: () => Promise<Row | undefined>, fresh: (row: Row) => boolean = () => true): Row | Promise<Row | undefined> {
    const caching = maxAgeMs > 0 && !this.#closed;
    // Listening before the first read's epoch is taken: a change delivered during it is not kept.
    if (caching && this.feed && !this.#unsubscribe) this.#unsubscribe = this.feed.subscribe(() => this.forgetAll());
    const hit = caching ? this.#get(hash, maxAgeMs) : undefined;
    if (hit !== undefined && fresh(hit)) return hit;
    const epoch = this.#epoch;
    const readAt = performance.now();
    return read().then((row) => {
      if (row !== undefined && caching && !this.#closed) this.#keep(hash, row, epoch, readAt);
      return row;
    });
  }
}
