/**
 * The waiting line of short file writes to one world on this replica: first come, first served,
 * each waiting at most until its own deadline. Only the writer at the head of a world's line asks
 * the database for the world's lock (the truth across replicas), so N writers on one replica cost
 * one poller instead of N, and they are served in the order they arrived.
 */
export class WorldWriteLines {
  readonly #lines = new Map<string, Waiter[]>();

  constructor(readonly maxWaiting: number) {}

  /**
   * Joins the world's line and resolves once this writer is at its head, with the function that
   * leaves it (call it exactly once). Resolves `undefined` when the line is full or the wait ran
   * past `waitMs`: the writer is out of the line again.
   */
  enter(world: string, waitMs: number): Promise<(() => void) | undefined> {
    let line = this.#lines.get(world);
    if (!line) {
      line = [];
      this.#lines.set(world, line);
    }
    if (line.length > this.maxWaiting) return Promise.resolve(undefined);
    const current = line;
    return new Promise((resolve) => {
      const waiter: Waiter = { turn: () => resolve(() => this.#leave(world, waiter)) };
      current.push(waiter);
      if (current.length === 1) {
        waiter.turn();
        return;
      }
      waiter.timer = setTimeout(() => {
        const at = current.indexOf(waiter);
        // At the head already: its turn came in the same tick, and it leaves like any holder.
        if (at <= 0) return;
        current.splice(at, 1);
        resolve(undefined);
      }, Math.max(0, waitMs));
      waiter.timer.unref?.();
    });
  }

  /** How many writers wait for the world or hold its turn (for tests and logs). */
  waiting(world: string): number {
    return this.#lines.get(world)?.length ?? 0;
  }

  #leave(world: string, waiter: Waiter): void {
    const line = this.#lines.get(world);
    if (!line || line[0] !== waiter) return;
    line.shift();
    const next = line[0];
    if (!next) {
      this.#lines.delete(world);
      return;
    }
    if (next.timer) clearTimeout(next.timer);
    next.turn();
  }
}

interface Waiter {
  turn: () => void;
  timer?: ReturnType<typeof setTimeout>;
}

/** Writers that may wait for one world on one replica; the next is refused at once. */
export const MAX_WAITING = 64;
