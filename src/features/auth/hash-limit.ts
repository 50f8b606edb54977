import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { addressKey, rateLimited, takeToken } from '../doors/index.js';

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
} as const;

/** At most `running` jobs at once and `waiting` queued; a job past that is refused at once. */
export class WorkGate {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    readonly running: number,
    readonly waiting: number,
  ) {}

  get load(): { active: number; queued: number } {
    return { active: this.active, queued: this.queue.length };
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active >= this.running) {
      if (this.queue.length >= this.waiting) {
        throw new DomainError('rate_limited', 'The server is busy checking passwords; try again shortly.', { retryAfterSeconds: 1 });
      }
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active += 1;
    }
    try {
      return await job();
    } finally {
      // The slot passes straight to the next waiter, so `active` never overshoots.
      const next = this.queue.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

const gates = new WeakMap<object, WorkGate>();

/** The hashing gate of one service (keyed by its database handle: one per process in production). */
export function hashGateOf(deps: Pick<Deps, 'database'>): WorkGate {
  let gate = gates.get(deps.database);
  if (!gate) {
    gate = new WorkGate(HASH_LIMITS.running, HASH_LIMITS.waiting);
    gates.set(deps.database, gate);
  }
  return gate;
}

/**
 * Counts one password hash against the account (`account` is a stable key: a user id, or the
 * lower-cased username typed at login) and the caller's address, then runs `job` through the gate.
 */
export async function throttledHashing<T>(
  deps: Pick<Deps, 'database' | 'clock'>,
  by: { account: string; clientIp: string },
  job: () => Promise<T>,
): Promise<T> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const { account: perAccount, address: perAddress } = HASH_LIMITS;
  const byAccount = await takeToken(db, `hash:account:${by.account}`, now, perAccount.burst, perAccount.perSecond);
  if (!byAccount.allowed) throw rateLimited(byAccount, 'Too many password attempts for this account; try again later.');
  const byAddress = await takeToken(db, `hash:address:${addressKey(by.clientIp)}`, now, perAddress.burst, perAddress.perSecond);
  if (!byAddress.allowed) throw rateLimited(byAddress, 'Too many password attempts from your address; try again later.');
  return hashGateOf(deps).run(job);
}
