import { createServer } from 'node:net';

/** Whether nothing listens on 127.0.0.1:`port` now (a bind that succeeds). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * The ports the local cluster owns (`LOCAL_PORT_RANGE`): each running game holds two (its game
 * port and its RCON port) until it ends. A port another program holds is skipped.
 */
export class PortRange {
  readonly #held = new Set<number>();

  constructor(readonly first: number, readonly last: number) {}

  /** Takes `count` free ports; throws when the range has no more. */
  async take(count: number): Promise<number[]> {
    const taken: number[] = [];
    for (let port = this.first; port <= this.last && taken.length < count; port += 1) {
      if (this.#held.has(port)) continue;
      this.#held.add(port);
      if (await bindable(port)) taken.push(port);
      else this.#held.delete(port);
    }
    if (taken.length < count) {
      this.give(taken);
      throw new Error(`no free port left in LOCAL_PORT_RANGE ${this.first}-${this.last}`);
    }
    return taken;
  }

  give(ports: Iterable<number>): void {
    for (const port of ports) this.#held.delete(port);
  }
}
