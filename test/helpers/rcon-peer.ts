import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { PaperGame } from '../../src/adapters/cluster/simulated-paper.js';
import type { RconEndpoint } from '../../src/adapters/rcon/client.js';

/**
 * A TCP RCON peer on 127.0.0.1 that behaves like a Paper server's RCON listener (its framing is
 * written here, apart from the client's, so that the two check each other): a login answered
 * with the request id or -1, command replies cut into packets (4096 bytes on a real server,
 * smaller here on request), "Unknown request 0" for a RESPONSE_VALUE packet, and a connection
 * dropped when one read holds more than one packet, as Minecraft does.
 */
export interface RconPeerOptions {
  password?: string;
  game?: PaperGame;
  /** Body bytes per reply packet (Minecraft: 4096). */
  fragmentBytes?: number;
  /** Where to listen (default: 127.0.0.1 on a free port). */
  host?: string;
  port?: number;
}

export interface RconPeer {
  endpoint: RconEndpoint;
  game: PaperGame;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Logins refused for a wrong password. */
  readonly refusedLogins: number;
  /** Connections dropped because one read held more than one packet. */
  readonly droppedForCoalescing: number;
  /** Stops answering commands (the login still works): for time-outs. */
  silent: boolean;
  fragmentBytes: number;
  /** Closes every open connection (a restarted pod). */
  dropConnections(): void;
  close(): Promise<void>;
}

function frame(id: number, type: number, body: Buffer): Buffer {
  const out = Buffer.alloc(14 + body.length);
  out.writeInt32LE(10 + body.length, 0);
  out.writeInt32LE(id, 4);
  out.writeInt32LE(type, 8);
  body.copy(out, 12);
  return out;
}

export async function startRconPeer(options: RconPeerOptions = {}): Promise<RconPeer> {
  const password = options.password ?? 'peer-password';
  const game = options.game ?? new PaperGame();
  const sockets = new Set<Socket>();
  const state = { accepted: 0, refusedLogins: 0, droppedForCoalescing: 0 };
  const peer = {
    silent: false,
    fragmentBytes: options.fragmentBytes ?? 4096,
  };

  const server: Server = createServer((socket) => {
    state.accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let authed = false;
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 4) return;
      const length = pending.readInt32LE(0);
      if (length < 10 || length > 1456) {
        socket.destroy();
        return;
      }
      if (pending.length < 4 + length) return;
      if (pending.length > 4 + length) {
        state.droppedForCoalescing += 1;
        socket.destroy();
        return;
      }
      const id = pending.readInt32LE(4);
      const type = pending.readInt32LE(8);
      const body = pending.subarray(12, 4 + length - 2).toString('utf8');
      pending = Buffer.alloc(0);
      if (type === 3) {
        authed = body === password;
        if (!authed) state.refusedLogins += 1;
        socket.write(frame(authed ? id : -1, 2, Buffer.alloc(0)));
      } else if (type === 2 && !authed) {
        socket.write(frame(-1, 2, Buffer.alloc(0)));
      } else if (type === 2) {
        if (peer.silent) return;
        const reply = Buffer.from(game.execute(body), 'utf8');
        let offset = 0;
        do {
          const part = reply.subarray(offset, offset + peer.fragmentBytes);
          socket.write(frame(id, 0, part));
          offset += peer.fragmentBytes;
        } while (offset < reply.length);
      } else {
        socket.write(frame(id, 0, Buffer.from(`Unknown request ${type.toString(16)}`)));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    game,
    endpoint: { host: options.host ?? '127.0.0.1', port, password },
    get silent() {
      return peer.silent;
    },
    set silent(value: boolean) {
      peer.silent = value;
    },
    get fragmentBytes() {
      return peer.fragmentBytes;
    },
    set fragmentBytes(value: number) {
      peer.fragmentBytes = value;
    },
    get accepted() {
      return state.accepted;
    },
    get refusedLogins() {
      return state.refusedLogins;
    },
    get droppedForCoalescing() {
      return state.droppedForCoalescing;
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
