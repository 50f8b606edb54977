import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a stand-in does with a hasJoined request: answers as the public session servers do. */
export type Behaviour =
  | { kind: 'profile'; body: unknown }
  | { kind: 'no-content' }
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'malformed' }
  | { kind: 'hang' }
  /** Waits for `release()` (or `delayMs`), then behaves as `then`. */
  | { kind: 'held'; then: Behaviour; delayMs?: number };

export interface Recorded {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
}

/**
 * A real HTTP session server on 127.0.0.1: `/session/minecraft/hasJoined` answers by the current
 * behaviour, `/users/profiles/minecraft/<name>` answers 200 for `takenNames`, else 404 with
 * Mojang's error body (or `profileBehaviour` when set).
 */
export class SessionStandIn {
  behaviour: Behaviour = { kind: 'no-content' };
  profileBehaviour: Behaviour | undefined;
  readonly takenNames = new Set<string>();
  readonly requests: Recorded[] = [];
  readonly #server: Server;
  readonly #held: Array<() => void> = [];
  readonly #answered: Array<() => void> = [];
  answeredCount = 0;
  /** TCP connections accepted: stays at 1 while the client keeps its connection alive. */
  connections = 0;
  port = 0;

  constructor() {
    this.#server = createServer((req, res) => this.#handle(req, res));
    this.#server.keepAliveTimeout = 30_000;
    this.#server.on('connection', () => (this.connections += 1));
  }

  static async start(): Promise<SessionStandIn> {
    const standIn = new SessionStandIn();
    await new Promise<void>((resolve) => standIn.#server.listen(0, '127.0.0.1', resolve));
    standIn.port = (standIn.#server.address() as AddressInfo).port;
    return standIn;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  hasJoinedRequests(): Recorded[] {
    return this.requests.filter((r) => r.path === '/session/minecraft/hasJoined');
  }

  profileRequests(): Recorded[] {
    return this.requests.filter((r) => r.path.startsWith('/users/profiles/minecraft/'));
  }

  /** Lets every held request answer. */
  release(): void {
    for (const go of this.#held.splice(0)) go();
  }

  /** Resolves once `count` requests in all have been answered. */
  answered(count: number): Promise<void> {
    if (this.answeredCount >= count) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (this.answeredCount >= count ? resolve() : this.#answered.push(check));
      this.#answered.push(check);
    });
  }

  async close(): Promise<void> {
    this.release();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    this.requests.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    if (url.pathname === '/session/minecraft/hasJoined') return this.#answer(this.behaviour, res);
    const profile = /^\/users\/profiles\/minecraft\/([^/]+)$/.exec(url.pathname);
    if (profile) {
      if (this.profileBehaviour) return this.#answer(this.profileBehaviour, res);
      const name = decodeURIComponent(profile[1]!);
      const taken = [...this.takenNames].find((n) => n.toLowerCase() === name.toLowerCase());
      return taken
        ? this.#answer({ kind: 'profile', body: { id: '0'.repeat(31) + '1', name: taken } }, res)
        : this.#answer(
            {
              kind: 'status',
              status: 404,
              body: JSON.stringify({
                path: url.pathname,
                errorMessage: `Couldn't find any profile with name ${name}`,
              }),
            },
            res,
          );
    }
    this.#answer({ kind: 'status', status: 404 }, res);
  }

  #answer(behaviour: Behaviour, res: ServerResponse): void {
    const done = () => {
      this.answeredCount += 1;
      for (const check of this.#answered.splice(0)) check();
    };
    switch (behaviour.kind) {
      case 'profile':
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(behaviour.body), done);
        return;
      case 'no-content':
        res.writeHead(204).end(done);
        return;
      case 'status':
        res.writeHead(behaviour.status, { 'Content-Type': 'application/json' }).end(behaviour.body ?? '', done);
        return;
      case 'redirect':
        res.writeHead(302, { Location: behaviour.location }).end(done);
        return;
      case 'malformed':
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"id": "069a79f444e94726a5befca90e38aaf5", "na', done);
        return;
      case 'hang':
        return;
      case 'held': {
        let timer: NodeJS.Timeout | undefined;
        let fired = false;
        const go = () => {
          if (fired) return;
          fired = true;
          clearTimeout(timer);
          this.#answer(behaviour.then, res);
        };
        if (behaviour.delayMs !== undefined) timer = setTimeout(go, behaviour.delayMs);
        this.#held.push(go);
        return;
      }
    }
  }
}
