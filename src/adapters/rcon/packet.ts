/**
 * Source RCON framing: int32 LE length (of what follows), int32 LE id, int32 LE type, the body,
 * then two NUL bytes. Minecraft reads a request in one read of at most 1460 bytes and splits a
 * reply's body into packets of at most 4096 bytes.
 */

export const PACKET_TYPE = {
  /** SERVERDATA_RESPONSE_VALUE: a reply fragment; sent by us only as the end marker. */
  responseValue: 0,
  /** SERVERDATA_EXECCOMMAND, and SERVERDATA_AUTH_RESPONSE from the server (same number). */
  command: 2,
  authResponse: 2,
  /** SERVERDATA_AUTH. */
  auth: 3,
} as const;

/** id + type + two NULs. */
const FRAME_OVERHEAD = 10;
/** The most Minecraft reads of a request at once (its read buffer), length field included. */
const MAX_OUTGOING_PACKET = 1460;
/** The longest body (UTF-8 bytes) one request may carry. */
export const MAX_OUTGOING_BODY = MAX_OUTGOING_PACKET - 4 - FRAME_OVERHEAD;
/** Minecraft cuts a reply every 4096 characters, so a fragment's body holds up to three bytes each. */
const MAX_INCOMING_PAYLOAD = 3 * 4096 + FRAME_OVERHEAD;

export interface Packet {
  id: number;
  type: number;
  body: Buffer;
}

export class RconProtocolError extends Error {
  override name = 'RconProtocolError';
}

export function encodePacket(id: number, type: number, body: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const packet = Buffer.alloc(4 + FRAME_OVERHEAD + bytes.length);
  packet.writeInt32LE(FRAME_OVERHEAD + bytes.length, 0);
  packet.writeInt32LE(id, 4);
  packet.writeInt32LE(type, 8);
  bytes.copy(packet, 12);
  // The two trailing NULs are already zero.
  return packet;
}

/**
 * Cuts a byte stream into packets. TCP may deliver a packet in pieces or several at once; a
 * length outside the protocol's bounds ends the stream (a peer that is not RCON).
 */
export class PacketReader {
  #pending: Buffer = Buffer.alloc(0);

  constructor(private readonly maxPayload = MAX_INCOMING_PAYLOAD) {}

  /** The whole packets the new bytes complete. */
  push(chunk: Buffer): Packet[] {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const packets: Packet[] = [];
    while (this.#pending.length >= 4) {
      const length = this.#pending.readInt32LE(0);
      if (length < FRAME_OVERHEAD || length > this.maxPayload) {
        throw new RconProtocolError(`invalid RCON packet length ${length}`);
      }
      if (this.#pending.length < 4 + length) break;
      packets.push({
        id: this.#pending.readInt32LE(4),
        type: this.#pending.readInt32LE(8),
        body: this.#pending.subarray(12, 4 + length - 2),
      });
      this.#pending = this.#pending.subarray(4 + length);
    }
    return packets;
  }

  /** Bytes received that do not yet make a whole packet. */
  get buffered(): number {
    return this.#pending.length;
  }
}
