import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from '../lib/logger.js';
import { InternalApiError, type InternalApi, type ServerView } from './internal-api.js';
import {
  listenerPlayerUuid,
  loginDisconnect,
  MAX_PACKET,
  parseHandshake,
  parseLoginStart,
  pong,
  ProtocolError,
  readPacket,
  statusResponse,
  type Handshake,
} from './protocol.js';

export interface GameListenerOptions {
  port: number;
  host: string;
  api: InternalApi;
  log: Logger;
  /** Connections held at once (handshakes, held logins, forwards); more are closed at once. */
  maxConnections?: number;
  /** Connections held at once from one address. */
  maxConnectionsPerAddress?: number;
  /** The handshake and the status request or login start must arrive within this. */
  handshakeTimeoutMs?: number;
  /** A login to a starting server is held this long at most (clients give up at 30 s), then told to rejoin. */
  holdMs?: number;
  /** How often a held login asks the server's status. */
  pollMs?: number;
  /** The panel's address, for the messages that send a player there. */
  panelUrl?: string;
}

export interface GameListener {
  readonly port: number;
  /** Connections open now. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Said to a player told to come back: a game server starts in well under a minute here. */
const REJOIN_SECONDS = 10;

/** Bytes a connection may send before the forward: the handshake plus a status request or a login start, with room. */
const MAX_BUFFERED = 3 * MAX_PACKET;

/**
 * The Minecraft (Java edition) listener on GAME_PORT: it reads the handshake's address, finds the
 * server by host through the internal face, answers a status ping itself while the server sleeps,
 * wakes it for a login with the proxy's wake rules, holds the login until it is ready (or tells the
 * player to rejoin) and then forwards the connection's bytes, the handshake and login start
 * included, to the game's own port. It authenticates nobody: the game keeps its online mode.
 */
export async function startGameListener(options: GameListenerOptions): Promise<GameListener> {
  const o = {
    maxConnections: 512,
    maxConnectionsPerAddress: 16,
    handshakeTimeoutMs: 5_000,
    holdMs: 25_000,
    // A status read is a cache lookup on loopback: asking often costs little and shortens the wait.
    pollMs: 200,
    ...options,
  };
  const sockets = new Set<Socket>();
  const perAddress = new Map<string, number>();
  let closing = false;

  const server: Server = createServer((socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const fromAddress = perAddress.get(address) ?? 0;
    if (closing || sockets.size >= o.maxConnections || fromAddress >= o.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    perAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      sockets.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    socket.on('error', () => socket.destroy());
    socket.setNoDelay(true);
    void handle(socket, o).catch((err: unknown) => {
      if (!(err instanceof ProtocolError)) o.log.warn({ err }, 'game listener: a connection failed');
      socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  o.log.info({ game_port: port, host: o.host }, 'game listener: listening');
  return {
    port,
    get connections() {
      return sockets.size;
    },
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

type Options = Required<Omit<GameListenerOptions, 'panelUrl'>> & Pick<GameListenerOptions, 'panelUrl'>;

/**
 * Reads whole packets off a connection that has not been forwarded yet, within one deadline for
 * all of them and a cap on the bytes; keeps every byte read, for the forward.
 */
class PacketSource {
  readonly received: Buffer[] = [];
  #pending = Buffer.alloc(0);
  #total = 0;
  #waiter: (() => void) | undefined;
  #ended = false;

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      this.#total += chunk.length;
      this.#pending = Buffer.concat([this.#pending, chunk]);
      if (this.#total > MAX_BUFFERED) socket.destroy();
      this.#waiter?.();
    });
    socket.once('close', () => {
      this.#ended = true;
      this.#waiter?.();
    });
  }

  async next(deadline: AbortSignal): Promise<{ id: number; body: Buffer }> {
    for (;;) {
      const packet = readPacket(this.#pending);
      if (packet) {
        this.#pending = this.#pending.subarray(packet.size);
        return packet;
      }
      if (this.#ended) throw new ProtocolError('the connection ended');
      if (deadline.aborted) throw new ProtocolError('too slow');
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#waiter = undefined;
          deadline.removeEventListener('abort', done);
          resolve();
        };
        this.#waiter = done;
        deadline.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Stops reading (the game reads the rest); answers every byte read so far. */
  detach(): Buffer {
    this.socket.removeAllListeners('data');
    this.socket.pause();
    return Buffer.concat(this.received);
  }
}

async function handle(socket: Socket, o: Options): Promise<void> {
  const deadline = AbortSignal.timeout(o.handshakeTimeoutMs);
  const onSlow = () => socket.destroy();
  deadline.addEventListener('abort', onSlow, { once: true });
  const source = new PacketSource(socket);
  const handshake = parseHandshake(await source.next(deadline));
  if (handshake.intent === 1) {
    const request = await source.next(deadline);
    if (request.id !== 0x00) throw new ProtocolError('the status state did not begin with a status request');
    deadline.removeEventListener('abort', onSlow);
    return status(socket, source, handshake, o, deadline);
  }
  const name = parseLoginStart(await source.next(deadline));
  deadline.removeEventListener('abort', onSlow);
  return login(socket, source, handshake, name, o);
}

function describe(server: ServerView): string {
  return server.displayName ?? server.name;
}

const isReady = (server: Pick<ServerView, 'phase' | 'ready'>) => server.phase === 'Running' && server.ready;

/** The server, undefined for an unknown host; InternalApiError when the control plane fails. */
async function lookUp(api: InternalApi, host: string): Promise<ServerView | undefined> {
  try {
    return await api.byHost(host);
  } catch (err) {
    if (err instanceof InternalApiError && (err.status === 404 || err.status === 400)) return undefined;
    throw err;
  }
}

const printable = (host: string) => host.replace(/[^a-z0-9.:-]/g, '').slice(0, 80);

async function status(socket: Socket, source: PacketSource, handshake: Handshake, o: Options, deadline: AbortSignal): Promise<void> {
  let motd: string;
  let found: ServerView | undefined;
  try {
    found = await lookUp(o.api, handshake.host);
    if (!found) motd = `No server answers at ${printable(handshake.host)} here`;
    else if (isReady(found) && found.endpointAddress) return forward(socket, source, found, o);
    else if (found.phase === 'Starting' || found.phase === 'Stopping' || (found.phase === 'Failed' && !found.startGaveUp)) motd = `${describe(found)} is starting: join in a moment`;
    else if (found.phase === 'Failed') motd = `${describe(found)} failed to start: its owner can retry from the panel`;
    else if (found.autostartPolicy === 'public') motd = `${describe(found)} is asleep: join to wake it`;
    else motd = `${describe(found)} is asleep: wake it from the panel`;
  } catch (err) {
    o.log.warn({ err, host: handshake.host }, 'game listener: the control plane did not answer a status ping');
    motd = 'The control plane is not answering; try again soon';
  }
  socket.write(statusResponse({ protocol: handshake.protocol, motd, online: 0, max: found?.playersMax ?? 0 }));
  // The ping that follows is answered with its own payload, then the connection ends.
  const ping = await source.next(deadline).catch(() => undefined);
  if (ping?.id === 0x01 && ping.body.length === 8) socket.end(pong(ping.body));
  else socket.destroy();
}

function disconnect(socket: Socket, message: string): void {
  socket.end(loginDisconnect(message));
}

async function login(socket: Socket, source: PacketSource, handshake: Handshake, player: string, o: Options): Promise<void> {
  const panel = o.panelUrl ? ` at ${o.panelUrl}` : '';
  let server: ServerView | undefined;
  try {
    server = await lookUp(o.api, handshake.host);
  } catch (err) {
    o.log.warn({ err, host: handshake.host }, 'game listener: the control plane did not answer a login');
    return disconnect(socket, 'The control plane is not answering; try again in a moment.');
  }
  if (!server) return disconnect(socket, `No server answers at ${printable(handshake.host)}. Check the address.`);
  if (isReady(server) && server.endpointAddress) return forward(socket, source, server, o);
  try {
    const woken = await o.api.wake(server.name, listenerPlayerUuid(player));
    o.log.info({ server: server.name, player, phase: woken.phase }, 'game listener: a join woke the server');
  } catch (err) {
    if (!(err instanceof InternalApiError)) throw err;
    // A cooldown is a wake already under way: wait for it like any other.
    if (err.status !== 429) {
      o.log.info({ server: server.name, player, status: err.status, code: err.code }, 'game listener: the wake was refused');
      return disconnect(socket, refusal(err, describe(server), panel));
    }
  }
  const ready = await hold(socket, server.name, o);
  if (socket.destroyed) return;
  if (ready === 'gave_up') return disconnect(socket, `${describe(server)} failed to start; its owner can retry from the panel${panel}.`);
  if (!ready) return disconnect(socket, `${describe(server)} is starting, rejoin in ${REJOIN_SECONDS} s.`);
  return forward(socket, source, ready, o);
}

function refusal(err: InternalApiError, server: string, panel: string): string {
  switch (err.code) {
    case 'forbidden':
      return `${server} is asleep, and only players its owner allows may wake it: wake it from the panel${panel}, or join through the network's proxy.`;
    case 'wake_share_exceeded':
      return 'You already keep as many servers running as a guest may wake; join one of them.';
    case 'at_capacity':
      return `There is no room to start ${server} now; try again later.`;
    case 'start_failed':
      return `${server} failed to start; its owner can retry from the panel${panel}.`;
    case 'maintenance_in_progress':
    case 'node_operation_busy':
      return `${server} is under maintenance; try again later.`;
    case 'server_retiring':
      return `${server} is being retired.`;
    default:
      return err.status === 404 ? `${server} no longer exists.` : 'The control plane could not start this server; try again in a moment.';
  }
}

/** Asks the server's status until it is ready, gave up, the hold is over, or the player left. */
async function hold(socket: Socket, name: string, o: Options): Promise<ServerView | 'gave_up' | undefined> {
  const until = Date.now() + o.holdMs;
  while (!socket.destroyed && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(o.pollMs, Math.max(0, until - Date.now()))));
    if (socket.destroyed) return undefined;
    try {
      const server = await o.api.status(name);
      if (isReady(server) && server.endpointAddress) return server;
      if (server.phase === 'Failed' && server.startGaveUp) return 'gave_up';
    } catch (err) {
      if (err instanceof InternalApiError && err.status === 404) return undefined;
      // A control plane that blinks: keep holding until the hold is over.
    }
  }
  return undefined;
}

/** Connects to the game and passes every byte both ways, beginning with those the listener read. */
function forward(socket: Socket, source: PacketSource, server: ServerView, o: Options): Promise<void> {
  const [host, portText] = splitHostPort(server.endpointAddress!);
  const head = source.detach();
  return new Promise<void>((resolve) => {
    const game = connect({ host, port: Number(portText) });
    game.setNoDelay(true);
    const connectTimer = setTimeout(() => game.destroy(new Error('the game did not accept in time')), 5_000);
    game.once('connect', () => {
      clearTimeout(connectTimer);
      game.write(head);
      socket.pipe(game);
      game.pipe(socket);
      socket.resume();
    });
    const end = (err?: Error) => {
      clearTimeout(connectTimer);
      if (err && !socket.destroyed && game.connecting) {
        o.log.warn({ err, server: server.name }, 'game listener: the game did not accept the forward');
        disconnect(socket, `${describe(server)} did not answer; rejoin in a moment.`);
      } else socket.destroy();
      game.destroy();
      resolve();
    };
    game.once('error', end);
    game.once('close', () => end());
    socket.once('close', () => game.destroy());
  });
}

function splitHostPort(address: string): [string, string] {
  const at = address.lastIndexOf(':');
  return at < 0 ? [address, '25565'] : [address.slice(0, at).replace(/^\[|\]$/g, ''), address.slice(at + 1)];
}
