/**
 * The per-key request limit (`API_KEY_REQUESTS_PER_MINUTE`), shared by the replicas, without a
 * write per request. The key's row counts, for the current minute, the requests the replicas have
 * *claimed* (`window_start`, `window_count`). A replica claims a slice of the minute's budget at a
 * time and answers from it with no statement; when its slice is spent it claims the next one, and
 * when the database has none left for the minute, the key gets 429 on every replica until the
 * minute ends.
 *
 * Why this design: the sum of the slices granted never passes the limit, so however many replicas
 * serve a key, it never makes more requests in a minute than the limit (the count the replicas
 * share is the database's, as before). What it costs: a replica may hold requests it has claimed
 * and not spent, which another replica cannot use, so a key spread over several replicas may be
 * refused a little before the limit. Slices start at one request and double with each claim in the
 * minute, up to a sixteenth of the limit: what a replica holds unspent is less than what it has
 * spent and never more than a sixteenth of the limit, and a busy key costs about
 * log2(limit/16) + 16 claims a minute per replica instead of one write per request. A replica that
 * stops loses its unspent slice until the minute ends (the limit is never passed, only reached
 * earlier).
 */

const MINUTE_MS = 60_000;
/** The largest slice is this fraction of the limit. */
const SLICE_CAP_DIVISOR = 16;

/** Asks the database for `want` more of the key's requests in the minute starting at `window`; how many it gave. */
export type ClaimSlice = (window: Date, want: number) => Promise<number>;

interface Slice {
  left: number;
  /** The next claim's size. */
  next: number;
  /** The database gave nothing: the minute's budget is spent on every replica. */
  spent: boolean;
  claiming?: Promise<void>;
}

export class KeyBudgets {
  /** The minute (its start, epoch ms) the slices held are of; older ones are dropped. */
  #minute = Number.NEGATIVE_INFINITY;
  #slices = new Map<string, Slice>();

  /** The minute `now` falls in (its start). */
  static windowOf(now: Date): number {
    return Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
  }

  /** Seconds until the minute of `now` ends (at least 1): a refused key's `Retry-After`. */
  static retryAfterSeconds(now: Date): number {
    return Math.max(1, Math.ceil((KeyBudgets.windowOf(now) + MINUTE_MS - now.getTime()) / 1000));
  }

  /**
   * Spends one of the key's requests of the minute of `now` (out of `limit`), claiming a slice
   * through `claim` when this replica holds none: false when the minute's budget is spent.
   */
  async take(keyId: string, now: Date, limit: number, claim: ClaimSlice): Promise<boolean> {
    const window = KeyBudgets.windowOf(now);
    if (window > this.#minute) {
      this.#minute = window;
      this.#slices.clear();
    }
    for (;;) {
      let slice = this.#slices.get(keyId);
      if (slice === undefined) this.#slices.set(keyId, (slice = { left: 0, next: 1, spent: false }));
      if (slice.left > 0) {
        slice.left--;
        return true;
      }
      if (slice.spent) return false;
      // One claim at a time per key: the requests that found the slice empty wait for it together.
      slice.claiming ??= this.#claimInto(slice, limit, claim);
      await slice.claiming;
    }
  }

  async #claimInto(slice: Slice, limit: number, claim: ClaimSlice): Promise<void> {
    try {
      const want = slice.next;
      const granted = await claim(new Date(this.#minute), want);
      slice.left += granted;
      if (granted === 0) slice.spent = true;
      slice.next = Math.min(want * 2, Math.max(1, Math.floor(limit / SLICE_CAP_DIVISOR)));
    } finally {
      slice.claiming = undefined;
    }
  }
}
