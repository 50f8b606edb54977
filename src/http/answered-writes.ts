/**
 * Tells this replica's read caches that a write request has been answered here (an unsafe method,
 * whatever its status): what it changed counts from the next request on. The front door calls
 * `answered()` once per such answer; a cache subscribes and forgets (the session check's
 * `forgetCached`, subscribed by accounts' maker; the menus). Another replica's writes are not seen
 * here: each cache bounds its age or listens to the database's change feed.
 */
export class AnsweredWrites {
  readonly #listeners = new Set<() => void>();

  subscribe(onWrite: () => void): () => void {
    this.#listeners.add(onWrite);
    return () => this.#listeners.delete(onWrite);
  }

  answered(): void {
    for (const onWrite of this.#listeners) onWrite();
  }
}
