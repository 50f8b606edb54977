/** One Server-Sent Event as a browser's EventSource would assemble it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads an event stream (a fetch or app.request body) the way the EventSource algorithm parses
 * it: fields per line, an event per blank line, `:` comments counted apart.
 */
export class SseReader {
  readonly events: SseEvent[] = [];
  comments = 0;
  ended = false;
  #buffer = '';
  #pending: { id?: string; event?: string; data?: string[] } = {};
  #waiters = new Set<() => void>();
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
    void this.#pump();
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.#reader.read();
        if (done) break;
        this.#feed(this.#decoder.decode(value, { stream: true }));
      }
    } catch {
      // A cancelled or broken stream ends like a closed one.
    }
    this.ended = true;
    this.#wake();
  }

  #feed(text: string): void {
    this.#buffer += text;
    let at: number;
    while ((at = this.#buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.#buffer.slice(0, at);
      this.#buffer = this.#buffer.slice(at + (this.#buffer.startsWith('\r\n', at) ? 2 : 1));
      if (line === '') {
        if (this.#pending.data) {
          this.events.push({ event: this.#pending.event ?? 'message', data: this.#pending.data.join('\n'), ...(this.#pending.id !== undefined ? { id: this.#pending.id } : {}) });
        }
        this.#pending = {};
      } else if (line.startsWith(':')) {
        this.comments += 1;
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') (this.#pending.data ??= []).push(value);
        else if (field === 'id') this.#pending.id = value;
        else if (field === 'event') this.#pending.event = value;
      }
    }
    this.#wake();
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  /** Resolves once `done()` holds (checked on each arrival), or rejects after `timeoutMs`. */
  until(done: (reader: SseReader) => boolean, timeoutMs = 5_000): Promise<void> {
    if (done(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`SSE wait timed out with ${this.events.length} events, ended=${this.ended}`));
      }, timeoutMs);
      const check = () => {
        if (!done(this)) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      this.#waiters.add(check);
    });
  }

  messages(): SseEvent[] {
    return this.events.filter((e) => e.event === 'message');
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => undefined);
  }
}
