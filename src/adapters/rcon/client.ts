import { connect, type Socket } from 'node:net';
import { encodePacket, MAX_OUTGOING_BODY, PACKET_TYPE, PacketReader, type Packet } from './packet.js';

/** Where a server's RCON listens, and its password (from the server's secret; never leaves the service). */
export interface RconEndpoint {
  host: string;
  port: number;
  password: string;
}

export interface RconTimeouts {
  /** TCP connect plus the auth exchange. */
  connectTimeoutMs: number;
  /** One command, from its write to the end of its reply. */
  commandTimeoutMs: number;
}

export const DEFAULT_RCON_TIMEOUTS: RconTimeouts = { connectTimeoutMs: 5_000, commandTimeoutMs: 10_000 };

/** The most one reassembled reply may hold (a server that never ends a reply cannot grow it further). */
const MAX_REPLY_BYTES = 1 << 20;
/** Minecraft answers a failed login with this request id. */
const AUTH_FAILED_ID = -1;

/** RCON cannot be used now: refused, closed, timed out or not speaking RCON. */
export class RconUnavailableError extends Error {
  override name = 'RconUnavailableError';
}

/** The server refused the password. */
export class RconAuthError extends RconUnavailableError {
  override name = 'RconAuthError';
}

/** A command or the login took longer than its time-out; the connection is closed. */
export class RconTimeoutError extends RconUnavailableError {
  override name = 'RconTimeoutError';
}

/** A command longer than one request packet can carry. */
export class RconCommandTooLongError extends Error {
  override name = 'RconCommandTooLongError';
}

interface Exchange {
  packet(packet: Packet): void;
  fail(err: Error): void;
}

/**
 * One authenticated Source-RCON connection. Commands run one at a time, in call order. A reply of
 * several packets is reassembled: once its first packet arrives, an empty RESPONSE_VALUE packet
 * is sent, which Minecraft answers ("Unknown request 0") only after the last fragment. The marker
 * waits for the first fragment because Minecraft drops a connection whose read holds more than
 * one packet.
 */
export class RconConnection {
  readonly #socket: Socket;
  readonly #reader = new PacketReader();
  readonly #timeouts: RconTimeouts;
  #exchange: Exchange | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 0;
  #closedBy: Error | undefined;

  private constructor(socket: Socket, timeouts: RconTimeouts) {
    this.#socket = socket;
    this.#timeouts = timeouts;
    socket.on('data', (chunk: Buffer) => {
      let packets: Packet[];
      try {
        packets = this.#reader.push(chunk);
      } catch (err) {
        this.#destroy(new RconUnavailableError((err as Error).message));
        return;
      }
      for (const packet of packets) this.#exchange?.packet(packet);
    });
    socket.on('error', (err) => this.#destroy(new RconUnavailableError(`RCON connection failed: ${err.message}`)));
    socket.on('close', () => this.#destroy(new RconUnavailableError('RCON connection closed')));
  }

  /** Connects and logs in; RconAuthError for a wrong password, RconUnavailableError otherwise. */
  static async open(endpoint: RconEndpoint, timeouts: RconTimeouts = DEFAULT_RCON_TIMEOUTS): Promise<RconConnection> {
    const socket = connect({ host: endpoint.host, port: endpoint.port });
    socket.setNoDelay(true);
    const connection = new RconConnection(socket, timeouts);
    try {
      await connection.#run(timeouts.connectTimeoutMs, 'login', (finish) => {
        const id = connection.#allocateId();
        const send = () => socket.write(encodePacket(id, PACKET_TYPE.auth, endpoint.password));
        if (socket.connecting) socket.once('connect', send);
        else send();
        return (packet) => {
          // Some servers send an empty RESPONSE_VALUE before the auth response.
          if (packet.type !== PACKET_TYPE.authResponse) return;
          if (packet.id === AUTH_FAILED_ID) finish(new RconAuthError('RCON refused the password'));
          else if (packet.id === id) finish(undefined, '');
        };
      });
    } catch (err) {
      connection.close();
      throw err;
    }
    return connection;
  }

  get closed(): boolean {
    return this.#closedBy !== undefined;
  }

  /** Runs one command and answers its whole reply (UTF-8). */
  command(command: string): Promise<string> {
    if (Buffer.byteLength(command, 'utf8') > MAX_OUTGOING_BODY) {
      return Promise.reject(new RconCommandTooLongError(`an RCON command carries at most ${MAX_OUTGOING_BODY} bytes`));
    }
    const run = this.#queue.then(() => this.#command(command));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.#destroy(new RconUnavailableError('RCON connection closed'));
  }

  #command(command: string): Promise<string> {
    return this.#run(this.#timeouts.commandTimeoutMs, 'command', (finish) => {
      const id = this.#allocateId();
      const end = this.#allocateId();
      const parts: Buffer[] = [];
      let size = 0;
      this.#socket.write(encodePacket(id, PACKET_TYPE.command, command));
      return (packet) => {
        if (packet.id === id) {
          size += packet.body.length;
          if (size > MAX_REPLY_BYTES) {
            finish(new RconUnavailableError(`RCON reply longer than ${MAX_REPLY_BYTES} bytes`));
            this.close();
            return;
          }
          if (parts.length === 0) this.#socket.write(encodePacket(end, PACKET_TYPE.responseValue, ''));
          parts.push(Buffer.from(packet.body));
        } else if (packet.id === end) {
          finish(undefined, Buffer.concat(parts).toString('utf8'));
        }
        // Any other id is a leftover of an earlier exchange (a second answer to an end marker).
      };
    });
  }

  /**
   * One exchange: `start` sends its request and returns what to do with each packet; `finish`
   * settles it. A time-out leaves the stream in an unknown state, so it closes the connection.
   */
  #run(
    timeoutMs: number,
    what: string,
    start: (finish: (err: Error | undefined, reply?: string) => void) => (packet: Packet) => void,
  ): Promise<string> {
    if (this.#closedBy) return Promise.reject(this.#closedBy);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish(new RconTimeoutError(`RCON ${what} timed out after ${timeoutMs} ms`));
        this.close();
      }, timeoutMs);
      let settled = false;
      const finish = (err: Error | undefined, reply = '') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.#exchange = undefined;
        if (err) reject(err);
        else resolve(reply);
      };
      this.#exchange = { packet: start(finish), fail: finish };
    });
  }

  #allocateId(): number {
    this.#nextId = this.#nextId >= 0x7fff_fff0 ? 1 : this.#nextId + 1;
    return this.#nextId;
  }

  #destroy(reason: Error): void {
    if (this.#closedBy) return;
    this.#closedBy = reason;
    this.#socket.destroy();
    this.#exchange?.fail(reason);
  }
}
