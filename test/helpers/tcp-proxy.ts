import { createServer, connect, type Server, type Socket } from 'node:net';

/** One direction of a relayed connection: bytes go straight through, or wait while held. */
class Relay {
  #waiting: Buffer[] = [];

  constructor(
    private readonly proxy: TcpProxy,
    private readonly to: Socket,
  ) {}

  push(chunk: Buffer): void {
    if (this.proxy.held) this.#waiting.push(chunk);
    else this.to.write(chunk);
  }

  flush(): void {
    for (const chunk of this.#waiting.splice(0)) this.to.write(chunk);
  }
}

/**
 * A TCP relay in front of a server that a test can turn into a black hole: connections stay open
 * and bytes are held, never answered, as when a network drops packets; `restore()` lets the held
 * bytes through, as a healed network does.
 */
export class TcpProxy {
  held = false;
  #relays = new Set<Relay>();
  #sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => proxy.#relay(client, targetPort));
    return proxy;
  }

  #relay(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    const up = new Relay(this, upstream);
    const down = new Relay(this, client);
    const close = () => {
      for (const s of [client, upstream]) {
        s.destroy();
        this.#sockets.delete(s);
      }
      this.#relays.delete(up);
      this.#relays.delete(down);
    };
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on('error', close).on('close', close);
    }
    this.#relays.add(up).add(down);
    client.on('data', (d: Buffer) => up.push(d));
    upstream.on('data', (d: Buffer) => down.push(d));
  }

  /** From now on nothing passes, in either direction, on old or new connections. */
  blackHole(): void {
    this.held = true;
  }

  restore(): void {
    this.held = false;
    for (const relay of this.#relays) relay.flush();
  }

  /** Drops every open connection at once (a connection lost mid-stream); new ones pass. */
  cut(): number {
    const count = this.#sockets.size / 2;
    for (const s of [...this.#sockets]) s.destroy();
    return count;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
