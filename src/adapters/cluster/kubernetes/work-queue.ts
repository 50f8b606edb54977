/**
 * A keyed work queue with client-go's workqueue semantics: a key is queued at most once; a key
 * added while a worker handles it is handled again after that worker is done, never by two
 * workers at once; failures come back after a per-key back-off that doubles (rate-limited
 * requeue) and is forgotten after a success; `addAfter` brings a key back at a time it names.
 */
export interface WorkQueueOptions {
  /** Workers handling keys at once. */
  workers: number;
  handle(key: string): Promise<void>;
  /** The first back-off after a failure; doubles per failure of the same key up to `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** A handler's failure (after which the key is requeued with back-off). */
  onError?(key: string, err: unknown): void;
  /** Called with each handling's duration in seconds and whether it failed. */
  onHandled?(key: string, seconds: number, failed: boolean): void;
}

export class WorkQueue {
  readonly #o: Required<Omit<WorkQueueOptions, 'onError' | 'onHandled'>> & Pick<WorkQueueOptions, 'onError' | 'onHandled'>;
  /** Keys waiting for a worker, in order. */
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  /** Added while processing: queued again when its worker is done. */
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #idle = new Set<() => void>();
  #active = 0;
  #running = false;
  /** Requeues after a failure, for the metrics. */
  requeues = 0;

  constructor(options: WorkQueueOptions) {
    this.#o = { baseBackoffMs: 500, maxBackoffMs: 60_000, ...options };
  }

  /** Keys waiting (not those being handled). */
  get depth(): number {
    return this.#queue.length;
  }

  /** Workers start taking keys. */
  run(): void {
    this.#running = true;
    this.#pump();
  }

  /** Workers stop taking keys (those being handled finish); the queue and timers are cleared. */
  async pause(): Promise<void> {
    this.#running = false;
    this.#queue.splice(0);
    this.#queued.clear();
    this.#dirty.clear();
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    await this.drained();
  }

  add(key: string): void {
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** The key comes back after `ms` (the earliest of several such asks wins). */
  addAfter(key: string, ms: number): void {
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const current = this.#timers.get(key);
    if (current && current.at <= at) return;
    if (current) clearTimeout(current.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.#timers.set(key, { at, timer });
  }

  /** Resolves when no key is waiting or being handled. */
  drained(): Promise<void> {
    if (this.#active === 0 && (this.#queue.length === 0 || !this.#running)) return Promise.resolve();
    return new Promise((resolve) => this.#idle.add(resolve));
  }

  #pump(): void {
    while (this.#running && this.#active < this.#o.workers && this.#queue.length > 0) {
      const key = this.#queue.shift()!;
      this.#queued.delete(key);
      this.#processing.add(key);
      this.#active += 1;
      void this.#work(key);
    }
    if (this.#active === 0 && (this.#queue.length === 0 || !this.#running)) {
      for (const resolve of this.#idle) resolve();
      this.#idle.clear();
    }
  }

  async #work(key: string): Promise<void> {
    const started = performance.now();
    let failed = false;
    try {
      await this.#o.handle(key);
      this.#failures.delete(key);
    } catch (err) {
      failed = true;
      this.#o.onError?.(key, err);
    }
    this.#o.onHandled?.(key, (performance.now() - started) / 1000, failed);
    this.#processing.delete(key);
    this.#active -= 1;
    if (failed && this.#running) {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      this.requeues += 1;
      this.addAfter(key, Math.min(this.#o.maxBackoffMs, this.#o.baseBackoffMs * 2 ** (failures - 1)));
    }
    if (this.#dirty.delete(key) && this.#running) this.add(key);
    this.#pump();
  }
}
