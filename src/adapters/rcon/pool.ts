import { DEFAULT_RCON_TIMEOUTS, RconConnection, RconTimeoutError, RconUnavailableError, type RconEndpoint, type RconTimeouts } from './client.js';

/** Finds a server's RCON address and password (the cluster adapter reads the server's secret). */
export type RconEndpointResolver = (server: string) => Promise<RconEndpoint>;

/**
 * One RCON connection per server, opened on first use and reused by every later command. A
 * connection found dead (the pod restarted, the server closed it) is replaced once, with the
 * endpoint resolved again; a time-out is not retried, since the command may have run.
 */
export class RconPool {
  readonly #connections = new Map<string, Promise<RconConnection>>();
  /** Which map entry each open connection came from, so a dead one is forgotten exactly once. */
  readonly #opened = new WeakMap<RconConnection, Promise<RconConnection>>();
  readonly #resolve: RconEndpointResolver;
  readonly #timeouts: RconTimeouts;
  #closed = false;

  constructor(resolve: RconEndpointResolver, timeouts: Partial<RconTimeouts> = {}) {
    this.#resolve = resolve;
    this.#timeouts = { ...DEFAULT_RCON_TIMEOUTS, ...timeouts };
  }

  async command(server: string, command: string): Promise<string> {
    const reused = this.#connections.has(server);
    let connection = await this.#connection(server);
    if (connection.closed) {
      this.#forget(server, connection);
      connection = await this.#connection(server);
    }
    try {
      return await connection.command(command);
    } catch (err) {
      this.#forget(server, connection);
      if (!reused || err instanceof RconTimeoutError || !(err instanceof RconUnavailableError)) throw err;
      const fresh = await this.#connection(server);
      try {
        return await fresh.command(command);
      } catch (retryErr) {
        this.#forget(server, fresh);
        throw retryErr;
      }
    }
  }

  /** Closes a server's connection (it stopped, or its password changed). */
  drop(server: string): void {
    const pending = this.#connections.get(server);
    this.#connections.delete(server);
    void pending?.then((c) => c.close(), () => undefined);
  }

  /** How many servers have a connection open or opening. */
  get size(): number {
    return this.#connections.size;
  }

  close(): void {
    this.#closed = true;
    for (const server of [...this.#connections.keys()]) this.drop(server);
  }

  #connection(server: string): Promise<RconConnection> {
    if (this.#closed) return Promise.reject(new RconUnavailableError('RCON is shutting down'));
    const existing = this.#connections.get(server);
    if (existing) return existing;
    const opening = this.#resolve(server).then((endpoint) => RconConnection.open(endpoint, this.#timeouts));
    this.#connections.set(server, opening);
    opening.then(
      (connection) => this.#opened.set(connection, opening),
      () => this.#connections.get(server) === opening && this.#connections.delete(server),
    );
    return opening;
  }

  #forget(server: string, connection: RconConnection): void {
    connection.close();
    const opening = this.#opened.get(connection);
    if (opening && this.#connections.get(server) === opening) this.#connections.delete(server);
  }
}
