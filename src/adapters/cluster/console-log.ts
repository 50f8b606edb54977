import type { PodLogLine, PodLogOptions } from './types.js';

/** Lines a game's log keeps (the oldest go first), like a container runtime's rotated log. */
const MAX_LINES = 20_000;
/** A longer line is cut: one line of a runaway game cannot hold the service's memory. */
const MAX_LINE_CHARS = 8_192;

/**
 * One game's console, read with the pod log's rules: `sinceTime` in whole seconds, `tailLines`,
 * and a follow that ends when the game ends. A local game's stdout and stderr, or a simulated pod's
 * lines.
 */
export class ConsoleLog {
  #lines: PodLogLine[] = [];
  /** Lines dropped from the front so far: the sequence number of `#lines[0]`. */
  #dropped = 0;
  #ended = false;
  readonly #wake = new Set<() => void>();

  constructor(private readonly now: () => Date) {}

  write(line: string): void {
    if (this.#ended) return;
    this.#lines.push({ time: this.now(), line: line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line });
    if (this.#lines.length > MAX_LINES) {
      const cut = this.#lines.length - MAX_LINES;
      this.#lines.splice(0, cut);
      this.#dropped += cut;
    }
    this.#notify();
  }

  end(): void {
    this.#ended = true;
    this.#notify();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The lines kept now (tests and the start-failure message). */
  lines(): string[] {
    return this.#lines.map((l) => l.line);
  }

  async *read(options: PodLogOptions): AsyncGenerator<PodLogLine> {
    let next = this.#dropped + this.#firstIndex(options);
    const { signal } = options;
    while (!signal.aborted) {
      if (next < this.#dropped) next = this.#dropped;
      while (next - this.#dropped < this.#lines.length) {
        const line = this.#lines[next - this.#dropped]!;
        next += 1;
        yield line;
        if (signal.aborted) return;
      }
      if (!options.follow || this.#ended) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#wake.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.#wake.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  #notify(): void {
    for (const wake of [...this.#wake]) wake();
  }

  #firstIndex(options: PodLogOptions): number {
    if (options.sinceTime) {
      // Kubernetes compares whole seconds.
      const since = Math.floor(options.sinceTime.getTime() / 1000) * 1000;
      const at = this.#lines.findIndex((l) => l.time.getTime() >= since);
      return at < 0 ? this.#lines.length : at;
    }
    if (options.tailLines !== undefined) return Math.max(0, this.#lines.length - options.tailLines);
    return 0;
  }
}
