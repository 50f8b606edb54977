import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { encodePacket, PACKET_TYPE, PacketReader } from '../rcon/packet.js';

/** A request packet is at most 1460 bytes on Minecraft (length field included). */
const MAX_REQUEST_PAYLOAD = 1456;
const REPLY_FRAGMENT = 4096;

/**
 * The RCON listener of a simulated pod: a real TCP server on 127.0.0.1 that logs in with the
 * pod's password and hands each command to `execute`, so the console routes reach a simulated
 * server exactly as they reach a real one.
 */
export class SimulatedRconListener {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  private constructor(password: string, execute: (command: string) => string, onConnect: (address: string) => void) {
    this.#server = createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => socket.destroy());
      onConnect(socket.remoteAddress ?? 'unknown');
      const reader = new PacketReader(MAX_REQUEST_PAYLOAD);
      let authed = false;
      socket.on('data', (chunk: Buffer) => {
        let packets;
        try {
          packets = reader.push(chunk);
        } catch {
          socket.destroy();
          return;
        }
        for (const { id, type, body } of packets) {
          if (type === PACKET_TYPE.auth) {
            authed = body.toString('utf8') === password;
            socket.write(encodePacket(authed ? id : -1, PACKET_TYPE.authResponse, ''));
          } else if (type === PACKET_TYPE.command && authed) {
            const reply = Buffer.from(execute(body.toString('utf8')), 'utf8');
            let offset = 0;
            do {
              socket.write(encodePacket(id, PACKET_TYPE.responseValue, reply.subarray(offset, offset + REPLY_FRAGMENT)));
              offset += REPLY_FRAGMENT;
            } while (offset < reply.length);
          } else if (type === PACKET_TYPE.command) {
            socket.write(encodePacket(-1, PACKET_TYPE.authResponse, ''));
          } else {
            socket.write(encodePacket(id, PACKET_TYPE.responseValue, `Unknown request ${type.toString(16)}`));
          }
        }
      });
    });
  }

  static async listen(password: string, execute: (command: string) => string, onConnect: (address: string) => void) {
    const listener = new SimulatedRconListener(password, execute, onConnect);
    await new Promise<void>((resolve, reject) => {
      listener.#server.once('error', reject);
      listener.#server.listen(0, '127.0.0.1', () => resolve());
    });
    listener.#server.unref();
    listener.#port = (listener.#server.address() as AddressInfo).port;
    return listener;
  }

  get port(): number {
    return this.#port;
  }

  close(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
  }
}
