import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import type { Logger } from '../lib/logger.js';

/**
 * Tells a replica that rows other processes read from their memory may have changed: the session
 * and API key checks' caches (src/features/accounts/keys/checked-rows.ts) and the open console streams'
 * access re-check read it. Triggers in the database send a notification on `CHANGE_CHANNEL`
 * whenever a session is revoked or moved, an account is changed or deleted, an API key is revoked
 * or a server member removed or changed, whoever wrote it: every writer is covered without knowing
 * of the cache.
 */
export interface ChangeFeed {
  /**
   * A time (this process's `performance.now()`) such that every change committed by any process
   * before it has been handed to the subscribers: a cached row read after the last hand-over is
   * at most `now - seenThrough()` behind the database. `-Infinity` while that cannot be said.
   */
  seenThrough(): number;
  /** `onChange` runs on every change delivered, and whenever some may have been missed. */
  subscribe(onChange: () => void): () => void;
  close(): Promise<void>;
}

export const CHANGE_CHANNEL = 'felis_session_changes';

/**
 * The embedded database: one process holds its folder (`felis.lock`), so no other process can
 * commit a change; this process's own writes forget the cache through the front door.
 */
export const singleProcessChanges: ChangeFeed = {
  seenThrough: () => Number.POSITIVE_INFINITY,
  subscribe: () => () => {},
  close: async () => {},
};

/** How often a replica sends itself a ping through the feed. */
const PING_MS = 250;
/** With no ping back for this long, the listening connection is presumed lost and made again. */
const RELISTEN_AFTER_MS = 3_000;

/**
 * PostgreSQL's LISTEN/NOTIFY. PostgreSQL hands a listener the notifications of all sessions in
 * the order their transactions committed. So this replica pings itself through the same channel
 * every 250 ms: when a ping sent at local time `t` comes back, every change committed before `t`
 * has come back before it. `seenThrough()` is the send time of the newest ping received. A
 * listening connection that died unnoticed, or a database that went away, stops the pings, and
 * `seenThrough()` falls behind by itself; a connection made again forgets everything first,
 * since what was committed while it was gone was never delivered.
 */
export class PostgresChangeFeed implements ChangeFeed {
  readonly #url: string;
  readonly #send: (payload: string) => Promise<unknown>;
  readonly #log: Pick<Logger, 'warn' | 'info'> | undefined;
  readonly #id = Math.random().toString(36).slice(2, 10);
  readonly #subscribers = new Set<() => void>();
  #listener: postgres.Sql | undefined;
  #seenThrough = Number.NEGATIVE_INFINITY;
  #listening = false;
  #lastPingBack = performance.now();
  #timer: NodeJS.Timeout;
  #closed = false;
  #lost = false;
  #pinging = false;

  /** `send` runs `select pg_notify(channel, payload)` on the service's own pool. */
  constructor(options: { url: string; send: (payload: string) => Promise<unknown>; log?: Pick<Logger, 'warn' | 'info'> }) {
    this.#url = options.url;
    this.#send = options.send;
    this.#log = options.log;
    this.#timer = setInterval(() => this.#tick(), PING_MS);
    this.#timer.unref();
    this.#listen();
  }

  seenThrough(): number {
    return this.#seenThrough;
  }

  subscribe(onChange: () => void): () => void {
    this.#subscribers.add(onChange);
    return () => this.#subscribers.delete(onChange);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#listener?.end({ timeout: 1 }).catch(() => {});
  }

  #changed(): void {
    for (const onChange of this.#subscribers) onChange();
  }

  #listen(): void {
    const listener = postgres(this.#url, {
      max: 1,
      connect_timeout: 3,
      onnotice: () => {},
      // LISTEN needs no array type; the fetch's unawaited promise is an unhandled rejection when
      // the server drops a connection as it opens (src/db/client.ts, the probe).
      fetch_types: false,
      connection: { application_name: 'felis-changes' },
    });
    this.#listener = listener;
    this.#listening = false;
    listener
      .listen(
        CHANGE_CHANNEL,
        (payload) => this.#delivered(payload),
        () => {
          // First listen, or again after a lost connection: what was committed in between was
          // never delivered, so nothing read before now may be trusted.
          this.#changed();
          this.#listening = true;
          if (this.#lost) this.#log?.info({ dependency: 'database' }, 'session change feed listening again');
          this.#lost = false;
        },
      )
      .catch(() => {
        // The database is away: the tick makes the connection again later.
      });
  }

  #delivered(payload: string): void {
    const ping = /^ping:([a-z0-9]+):(\d+(?:\.\d+)?)$/.exec(payload);
    if (ping === null) {
      this.#changed();
      return;
    }
    if (ping[1] !== this.#id) return;
    this.#seenThrough = Math.max(this.#seenThrough, Number(ping[2]));
    this.#lastPingBack = performance.now();
  }

  #tick(): void {
    if (this.#closed) return;
    const now = performance.now();
    if (now - this.#lastPingBack > RELISTEN_AFTER_MS) {
      if (!this.#lost) this.#log?.warn({ dependency: 'database' }, 'session change feed lost: signed-in reads query the database until it listens again');
      this.#lost = true;
      this.#lastPingBack = now;
      const old = this.#listener;
      void old?.end({ timeout: 0 }).catch(() => {});
      this.#listen();
      return;
    }
    // One ping at a time: while the database is away they would queue behind its connect time-out.
    if (!this.#listening || this.#pinging) return;
    this.#pinging = true;
    // The send time is taken before the statement: its NOTIFY commits after it.
    this.#send(`ping:${this.#id}:${now}`)
      .catch(() => {
        // The database is away: no ping comes back and seenThrough() falls behind.
      })
      .finally(() => (this.#pinging = false));
  }
}
