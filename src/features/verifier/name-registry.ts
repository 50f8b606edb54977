import type { ProfileLookup } from '../../adapters/session-sources/sources.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { VerifierMetrics } from './metrics.js';

export const TAKEN_TTL_MS = 24 * 60 * 60 * 1000;
export const FREE_TTL_MS = 10 * 60 * 1000;
/**
 * A failed lookup counts the name as taken (the player gets the prefixed name, never someone
 * else's), but is kept only briefly: caching it for the 24 h of a real "taken" would prefix a
 * free name for a day after a short outage, and not caching it at all would send every login to a
 * dead API and wait out its time-out.
 */
export const FAILED_TTL_MS = 60 * 1000;
export const NAME_CACHE_MAX = 10_000;

interface Entry {
  taken: boolean;
  expiresAt: number;
}

/**
 * "Is this name registered at the primary source?", through a bounded in-memory cache (least
 * recently used evicted first; a Map keeps insertion order and a hit re-inserts). Concurrent
 * lookups of one name share one request. Names are case-insensitive at the primary.
 */
export class NameRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly lookup: ProfileLookup | undefined,
    private readonly clock: Clock,
    private readonly metrics: VerifierMetrics,
    private readonly log: Logger,
    private readonly maxEntries = NAME_CACHE_MAX,
  ) {}

  /** Never rejects: a failure answers true (taken). */
  isTaken(name: string): Promise<boolean> {
    const key = name.toLowerCase();
    const now = this.clock.now().getTime();
    const cached = this.#entries.get(key);
    if (cached && cached.expiresAt > now) {
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      this.metrics.nameLookups.inc({ result: 'cached' });
      return Promise.resolve(cached.taken);
    }
    if (cached) this.#entries.delete(key);
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#ask(name).then(({ taken, ttl }) => {
        this.#inFlight.delete(key);
        this.#remember(key, { taken, expiresAt: this.clock.now().getTime() + ttl });
        return taken;
      });
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  get size(): number {
    return this.#entries.size;
  }

  async #ask(name: string): Promise<{ taken: boolean; ttl: number }> {
    if (!this.lookup) {
      // Fail closed: without a name-lookup root no third-party name can be proven free.
      this.metrics.nameLookups.inc({ result: 'failed' });
      return { taken: true, ttl: TAKEN_TTL_MS };
    }
    const answer = await this.lookup.profileByName(name);
    if (answer.kind === 'json' && answer.status === 200) {
      this.metrics.nameLookups.inc({ result: 'taken' });
      return { taken: true, ttl: TAKEN_TTL_MS };
    }
    if (answer.kind === 'empty') {
      this.metrics.nameLookups.inc({ result: 'free' });
      return { taken: false, ttl: FREE_TTL_MS };
    }
    this.metrics.nameLookups.inc({ result: 'failed' });
    this.log.warn(
      { name, reason: answer.kind === 'failed' ? answer.detail : `status ${answer.status}` },
      'primary name lookup failed; counting the name as taken',
    );
    return { taken: true, ttl: FAILED_TTL_MS };
  }

  #remember(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}
