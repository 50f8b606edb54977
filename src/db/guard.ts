import { DependencyUnavailable } from '../lib/unavailable.js';

/** How long one statement may take before the database counts as not answering. */
export const QUERY_DEADLINE_MS = 4000;
/** A transaction's statements each have the deadline above; the whole of it has this one. */
export const TRANSACTION_DEADLINE_MS = 8000;
/** While the database is down, how often a fresh connection is tried. */
export const PROBE_INTERVAL_MS = 500;

// postgres-js's own codes and Node's socket errors: the connection, not the statement, failed.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // The embedded database's socket is gone while its thread starts again (src/db/embedded.ts).
  'ENOENT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // SQLSTATE: too many connections, shutting down, crash shutdown, cannot connect now
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);

/** Whether `err` says the database cannot be reached (as opposed to a statement it refused). */
export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  // An embedded PGlite closed under the service.
  return err.message === 'PGlite is closed';
}

export interface GuardOptions {
  /** Runs one `select 1` on a fresh connection; resolves when the database answers. */
  probe: () => Promise<void>;
  onDown?: (reason: string) => void;
  onUp?: () => void;
  queryDeadlineMs?: number;
  transactionDeadlineMs?: number;
  probeIntervalMs?: number;
}

const TIMED_OUT = Symbol('timed out');

/**
 * Bounds every wait on the database. A statement that does not answer within its deadline, or a
 * connection that fails, is a DependencyUnavailable (503 at the edge), never a request held until
 * the database comes back. A failed connection trips the guard: statements then fail at once while
 * a fresh connection is tried every half second, and the first answer lets them through again.
 * A deadline alone does not trip it (a lock wait is slow, not down): it asks the probe first.
 */
export class DatabaseGuard {
  #down = false;
  /** Why statements are refused although the database may answer (it is not migrated yet). */
  #held: string | undefined;
  #probing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly queryDeadlineMs: number;
  readonly transactionDeadlineMs: number;

  constructor(private readonly options: GuardOptions) {
    this.queryDeadlineMs = options.queryDeadlineMs ?? QUERY_DEADLINE_MS;
    this.transactionDeadlineMs = options.transactionDeadlineMs ?? TRANSACTION_DEADLINE_MS;
  }

  get down(): boolean {
    return this.#down || this.#held !== undefined;
  }

  /**
   * Refuses every statement (503) until `release()`, whether or not the database answers: a
   * service that started before its database has not migrated it yet.
   */
  hold(reason: string): void {
    this.#held = reason;
  }

  release(): void {
    this.#held = undefined;
  }

  /** Runs `work` within `deadlineMs` (none when 0); `cancel` is called when the deadline passes first. */
  async run<T>(work: () => PromiseLike<T>, deadlineMs: number, cancel?: () => void): Promise<T> {
    if (this.#down) throw new DependencyUnavailable('database', 'the database does not answer', 2);
    if (this.#held !== undefined) throw new DependencyUnavailable('database', this.#held, 2);
    const pending = Promise.resolve().then(work);
    let timer: NodeJS.Timeout | undefined;
    try {
      if (deadlineMs <= 0) return await pending;
      const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
        timer = setTimeout(resolve, deadlineMs, TIMED_OUT);
      });
      const first = await Promise.race([pending, deadline]);
      if (first !== TIMED_OUT) return first as T;
      pending.catch(() => {}); // settles later, or never; nobody waits for it any more
      cancel?.();
      this.#checkNow();
      throw new DependencyUnavailable('database', `no answer within ${deadlineMs} ms`);
    } catch (err) {
      if (err instanceof DependencyUnavailable || !isConnectionFailure(err)) throw err;
      this.#trip(err instanceof Error ? err.message : String(err));
      throw new DependencyUnavailable('database', 'the connection failed', 2, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  /** A deadline passed: one probe now decides whether the database is down or only slow. */
  #checkNow(): void {
    if (this.#down || this.#probing) return;
    this.#probing = this.options
      .probe()
      .catch((err: unknown) => this.#trip(`no answer to a probe: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        this.#probing = undefined;
      });
  }

  #trip(reason: string): void {
    if (this.#down || this.#closed) return;
    this.#down = true;
    this.options.onDown?.(reason);
    this.#scheduleProbe();
  }

  #scheduleProbe(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.options.probe().then(
        () => {
          this.#down = false;
          this.options.onUp?.();
        },
        () => this.#scheduleProbe(),
      );
    }, this.options.probeIntervalMs ?? PROBE_INTERVAL_MS);
    this.#timer.unref();
  }
}
