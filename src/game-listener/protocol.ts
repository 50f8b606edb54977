import { createHash } from 'node:crypto';

/**
 * The few packets of the Minecraft (Java edition) protocol the listener reads and writes before it
 * forwards a connection: the handshake, the status request and ping, the login start, and the
 * answers (status, pong, login disconnect). These have kept their shape since 1.7; everything after
 * the login start is the game's and passes through untouched. Every read is bounded: a packet
 * longer than `MAX_PACKET` or a VarInt longer than 5 bytes is a malformed connection.
 */

/** The longest packet accepted before the forward (a handshake is at most ~780 bytes, a login start ~60). */
export const MAX_PACKET = 1024;

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export function encodeVarInt(value: number): Buffer {
  const bytes: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0);
  return Buffer.from(bytes);
}

/** A VarInt at `offset`: its value and the offset after it, or undefined when more bytes are needed. */
export function readVarInt(buf: Buffer, offset: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let i = 0; i < 5; i += 1) {
    if (offset + i >= buf.length) return undefined;
    const byte = buf[offset + i]!;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  throw new ProtocolError('a VarInt longer than 5 bytes');
}

/** One framed packet at the front of `buf`: its id, its body, and its length on the wire; undefined when incomplete. */
export function readPacket(buf: Buffer): { id: number; body: Buffer; size: number } | undefined {
  const length = readVarInt(buf, 0);
  if (!length) {
    if (buf.length >= 3) throw new ProtocolError('a packet length that does not end');
    return undefined;
  }
  if (length.value <= 0 || length.value > MAX_PACKET) throw new ProtocolError(`a packet of ${length.value} bytes`);
  if (buf.length < length.next + length.value) return undefined;
  const packet = buf.subarray(length.next, length.next + length.value);
  const id = readVarInt(packet, 0);
  if (!id) throw new ProtocolError('a packet without an id');
  return { id: id.value, body: packet.subarray(id.next), size: length.next + length.value };
}

function readString(body: Buffer, offset: number, maxChars: number): { value: string; next: number } {
  const length = readVarInt(body, offset);
  if (!length || length.value < 0 || length.value > maxChars * 3 || length.next + length.value > body.length) {
    throw new ProtocolError('a string past its packet or longer than allowed');
  }
  const value = body.subarray(length.next, length.next + length.value).toString('utf8');
  if ([...value].length > maxChars) throw new ProtocolError('a string longer than allowed');
  return { value, next: length.next + length.value };
}

export interface Handshake {
  protocol: number;
  /** The address the client typed, without a Forge marker or a trailing dot, lower case. */
  host: string;
  port: number;
  /** 1 status, 2 login, 3 transfer (a login from another server, 1.20.5+). */
  intent: number;
}

export function parseHandshake(packet: { id: number; body: Buffer }): Handshake {
  if (packet.id !== 0x00) throw new ProtocolError('the first packet is not a handshake');
  const protocol = readVarInt(packet.body, 0);
  if (!protocol) throw new ProtocolError('a handshake without a protocol version');
  const address = readString(packet.body, protocol.next, 255);
  if (address.next + 2 > packet.body.length) throw new ProtocolError('a handshake without a port');
  const port = packet.body.readUInt16BE(address.next);
  const intent = readVarInt(packet.body, address.next + 2);
  if (!intent || ![1, 2, 3].includes(intent.value)) throw new ProtocolError('a handshake with an unknown next state');
  // Forge appends "\0FML\0" (and more) to the address; a fully qualified name may end with a dot.
  const host = address.value.split('\0')[0]!.replace(/\.$/, '').toLowerCase();
  return { protocol: protocol.value, host, port, intent: intent.value };
}

/** The player's name in a login start (the UUID that newer clients add is not read: nothing here can verify it). */
export function parseLoginStart(packet: { id: number; body: Buffer }): string {
  if (packet.id !== 0x00) throw new ProtocolError('the login state did not begin with a login start');
  const name = readString(packet.body, 0, 16).value;
  if (!/^[A-Za-z0-9_.-]{1,16}$/.test(name)) throw new ProtocolError('a player name the game would refuse');
  return name;
}

function frame(id: number, body: Buffer): Buffer {
  const payload = Buffer.concat([encodeVarInt(id), body]);
  return Buffer.concat([encodeVarInt(payload.length), payload]);
}

function stringField(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([encodeVarInt(bytes.length), bytes]);
}

export function statusResponse(status: { protocol: number; motd: string; online: number; max: number }): Buffer {
  const json = JSON.stringify({
    version: { name: 'Felis', protocol: status.protocol },
    players: { max: status.max, online: status.online },
    description: { text: status.motd },
  });
  return frame(0x00, stringField(json));
}

export function pong(payload: Buffer): Buffer {
  return frame(0x01, payload);
}

/** A login-state disconnect: its reason is a JSON text component in every version. */
export function loginDisconnect(message: string): Buffer {
  return frame(0x00, stringField(JSON.stringify({ text: message })));
}

/**
 * The UUID a wake from the listener is made with: a name-based UUID in a namespace of its own, so
 * it is never a linked player's (the login start's name and UUID are the client's word, unverified).
 */
export function listenerPlayerUuid(name: string): string {
  const hash = createHash('md5').update(`felis-game-listener:${name}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x30;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
