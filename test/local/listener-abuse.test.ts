import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalApi, startGameListener, type GameListener } from '../../src/game-listener/index.js';
import { encodeVarInt } from '../../src/game-listener/protocol.js';
import { createLogger } from '../../src/lib/logger.js';
import type { RunningService } from '../../src/service.js';
import { TOKENS } from '../helpers/app.js';
import { login, pingMotd } from '../helpers/local-game/client.js';
import { startTestService } from '../helpers/service.js';

/**
 * The listener against what a hostile or broken client sends: it is cut, never left hanging, and
 * a flood of connections is refused beyond the caps. The control plane is the real service (on
 * the simulated cluster: nothing here reaches a game).
 */
describe('the game listener against bad handshakes and floods', () => {
  let service: RunningService;
  let listener: GameListener;

  beforeAll(async () => {
    service = await startTestService();
    listener = await startGameListener({
      port: 0,
      host: '127.0.0.1',
      api: new InternalApi({ baseUrl: `http://127.0.0.1:${service.internal.port}`, token: TOKENS.proxy }),
      log: createLogger('silent'),
      handshakeTimeoutMs: 300,
      maxConnections: 6,
      maxConnectionsPerAddress: 4,
    });
  });
  afterAll(async () => {
    await listener?.close();
    await service?.stop();
  });

  /** Connects, sends `bytes` (if any), and resolves with what came back once the listener closed the connection. */
  function exchange(bytes?: Buffer, port = listener.port): Promise<Buffer> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      const got: Buffer[] = [];
      socket.on('data', (d: Buffer) => got.push(d));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(got)));
      if (bytes) socket.write(bytes);
    });
  }

  const packet = (id: number, body: Buffer) => {
    const payload = Buffer.concat([encodeVarInt(id), body]);
    return Buffer.concat([encodeVarInt(payload.length), payload]);
  };
  const text = (s: string) => Buffer.concat([encodeVarInt(Buffer.byteLength(s)), Buffer.from(s)]);
  const handshake = (host: string, intent: number) =>
    packet(0, Buffer.concat([encodeVarInt(765), text(host), Buffer.from([0x63, 0xdd]), encodeVarInt(intent)]));

  it('cuts a connection that sends something other than a handshake (an HTTP request), answering nothing', async () => {
    expect((await exchange(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).length).toBe(0);
  });

  it('cuts a packet longer than a handshake can be, and a VarInt longer than five bytes', async () => {
    expect((await exchange(encodeVarInt(100_000))).length).toBe(0);
    expect((await exchange(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).length).toBe(0);
  });

  it('cuts a handshake whose address is longer than allowed, or whose next state is unknown', async () => {
    expect((await exchange(handshake('a'.repeat(300), 2))).length).toBe(0);
    expect((await exchange(handshake('survival.felis.test', 7))).length).toBe(0);
  });

  it('cuts a login start whose name the game would refuse', async () => {
    const bytes = Buffer.concat([handshake('survival.felis.test', 2), packet(0, text('bad name with spaces'))]);
    expect((await exchange(bytes)).length).toBe(0);
  });

  it('cuts a client that sends nothing, and one that trickles its handshake, at the handshake deadline', async () => {
    expect((await exchange()).length).toBe(0);
    const whole = handshake('survival.felis.test', 1);
    const trickled = await new Promise<Buffer>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: listener.port });
      let at = 0;
      const timer = setInterval(() => {
        if (at < whole.length && !socket.destroyed) socket.write(whole.subarray(at, (at += 1)));
      }, 100);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve(Buffer.from(String(at)));
      });
    });
    // The deadline is one for the whole handshake: it fell before the trickle ended.
    expect(Number(trickled.toString())).toBeLessThan(whole.length);
  });

  it('cuts a flood of bytes after a handshake', async () => {
    const bytes = Buffer.concat([handshake('survival.felis.test', 1), Buffer.alloc(64 * 1024, 0x01)]);
    expect((await exchange(bytes)).length).toBe(0);
  });

  it('refuses connections past the per-address cap at once, and takes new ones when they close', async () => {
    const held: Socket[] = [];
    const open = () =>
      new Promise<Socket>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: listener.port }, () => resolve(socket));
        socket.on('error', () => undefined);
      });
    for (let i = 0; i < 4; i += 1) held.push(await open());
    await expect.poll(() => listener.connections).toBe(4);
    // The fifth from this address is closed before it says anything.
    const refused = await exchange();
    expect(refused.length).toBe(0);
    expect(listener.connections).toBe(4);
    for (const socket of held) socket.destroy();
    await expect.poll(() => listener.connections).toBe(0);
    // A ping still gets its answer.
    expect((await pingMotd(listener.port, 'nowhere.felis.test')).motd).toBe('No server answers at nowhere.felis.test here');
  });

  it('answers with a message, not a hang, when the control plane does not answer', async () => {
    const dead = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    const orphan = await startGameListener({
      port: 0,
      host: '127.0.0.1',
      api: new InternalApi({ baseUrl: `http://127.0.0.1:${port}`, token: TOKENS.proxy }),
      log: createLogger('silent'),
    });
    try {
      expect((await pingMotd(orphan.port, 'survival.felis.test')).motd).toBe('The control plane is not answering; try again soon');
      expect(await login(orphan.port, 'survival.felis.test', 'Steve')).toMatchObject({
        joined: false,
        reason: 'The control plane is not answering; try again in a moment.',
      });
    } finally {
      await orphan.close();
      dead.close();
    }
  });
});
