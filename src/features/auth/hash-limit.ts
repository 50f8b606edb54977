import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { addressKey, giveTokenBack, rateLimited, takeToken } from '../doors/index.js';

/**
 * Password hashing (scrypt, 128 MiB and a few hundred milliseconds of CPU a run) is the one job a
 * stranger can make this process do at will. It is bounded three ways: a per-account and a
 * per-address token bucket in the database (every replica counts together), and a per-process gate
 * that runs at most `running` hashes at once with at most `waiting` queued; past either, 429
 * `rate_limited` with Retry-After, never a queue that grows.
 */
export const HASH_LIMITS = {
  /** Per account: a burst of 10 hashes, 10 more a minute. */
  account: { burst: 10, perSecond: 10 / 60 },
  /** Per client address (IPv6 per /64): a burst of 20, 20 more a minute. */
  address: { burst: 20, perSecond: 20 / 60 },
  running: 2,
  waiting: 6,
  /** Known clients (an address the account signed in from before) wait in a lane of their own, served first. */
  knownWaiting: 6,
} as const;

/** The gate refused a job because it is full (not a limit of the caller's own). */
export class GateBusy extends DomainError {
  constructor() {
    super('rate_limited', 'The server is busy checking passwords; try again shortly.', { retryAfterSeconds: 1 });
  }
}

/**
 * At most `running` jobs at once and `waiting` queued; a job past that is refused at once. Jobs
 * of known clients queue in a lane of their own (`knownWaiting` places) and are served first, so
 * strangers filling the gate cannot starve them.
 */
export class WorkGate {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  private readonly knownQueue: Array<() => void> = [];

  constructor(
    readonly running: number,
    readonly waiting: number,
    readonly knownWaiting = waiting,
  ) {}

  get load(): { active: number; queued: number } {
    return { active: this.active, queued: this.queue.length + this.knownQueue.length };
  }

  async run<T>(job: () => Promise<T>, options: { known?: boolean } = {}): Promise<T> {
    if (this.active >= this.running) {
      const queue = options.known ? this.knownQueue : this.queue;
      if (queue.length >= (options.known ? this.knownWaiting : this.waiting)) throw new GateBusy();
      await new Promise<void>((resolve) => queue.push(resolve));
    } else {
      this.active += 1;
    }
    try {
      return await job();
    } finally {
      // The slot passes straight to the next waiter (a known client's first), so `active` never overshoots.
      const next = this.knownQueue.shift() ?? this.queue.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

/**
 * What the auth feature makes: the hashing gate of this process (one per service, made by
 * `createAuthParts`; it holds only the queue of jobs waiting, so nothing needs stopping).
 */
export interface AuthParts {
  hashGate: WorkGate;
}

/** Makes the auth feature's gate, once per service (`given` replaces it: tests and benches). */
export function createAuthParts(given: Partial<AuthParts> = {}): AuthParts {
  return { hashGate: given.hashGate ?? new WorkGate(HASH_LIMITS.running, HASH_LIMITS.waiting, HASH_LIMITS.knownWaiting) };
}

/**
 * Counts one password hash against the account (`account` is a stable key: a user id, or the
 * lower-cased username typed at login) and the caller's address, then runs `job` through the gate
 * (`known`: in the lane of known clients). A refusal of the busy gate gives both tokens back: it
 * is not the caller's attempt, and must not use up the account's own allowance.
 */
export async function throttledHashing<T>(
  deps: Pick<Deps, 'database' | 'clock'> & AuthParts,
  by: { account: string; clientIp: string; known?: boolean },
  job: () => Promise<T>,
): Promise<T> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const { account: perAccount, address: perAddress } = HASH_LIMITS;
  const accountKey = `hash:account:${by.account}`;
  const addressKeyed = `hash:address:${addressKey(by.clientIp)}`;
  const byAccount = await takeToken(db, accountKey, now, perAccount.burst, perAccount.perSecond);
  if (!byAccount.allowed) throw rateLimited(byAccount, 'Too many password attempts for this account; try again later.');
  const byAddress = await takeToken(db, addressKeyed, now, perAddress.burst, perAddress.perSecond);
  if (!byAddress.allowed) {
    await giveTokenBack(db, accountKey, perAccount.burst);
    throw rateLimited(byAddress, 'Too many password attempts from your address; try again later.');
  }
  try {
    return await deps.hashGate.run(job, { known: by.known });
  } catch (err) {
    if (err instanceof GateBusy) await Promise.all([giveTokenBack(db, accountKey, perAccount.burst), giveTokenBack(db, addressKeyed, perAddress.burst)]);
    throw err;
  }
}
