import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startRconPeer, type RconPeer } from '../../../test/helpers/rcon-peer.js';
import { PaperGame } from '../cluster/simulated-paper.js';
import { RconAuthError, RconCommandTooLongError, RconConnection, RconTimeoutError, RconUnavailableError } from './client.js';
import { RconPool } from './pool.js';

const peers: RconPeer[] = [];
async function peer(options: Parameters<typeof startRconPeer>[0] = {}) {
  const p = await startRconPeer(options);
  peers.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

describe('RCON connection', () => {
  it('logs in and answers a command', async () => {
    const p = await peer();
    p.game.join('Alice');
    const rcon = await RconConnection.open(p.endpoint);
    expect(await rcon.command('list')).toBe('There are 1 of a max of 20 players online: Alice');
    rcon.close();
  });

  it('reassembles a reply split over many packets, characters cut between packets included', async () => {
    const p = await peer({ fragmentBytes: 7 });
    const rcon = await RconConnection.open(p.endpoint);
    const reply = await rcon.command('lp user Steve permission set essentials.fly true');
    expect(reply).toBe('§7[§b§lL§3§lP§7]§r §aSet §bessentials.fly§a to §atrue§a for §bSteve§a in context §bglobal§a.');
    expect(p.droppedForCoalescing).toBe(0);
    rcon.close();
  });

  it('reassembles a reply longer than one 4096-byte packet', async () => {
    const p = await peer();
    for (let i = 0; i < 600; i++) p.game.whitelist.push(`player_${i}`);
    const rcon = await RconConnection.open(p.endpoint);
    const reply = await rcon.command('whitelist list');
    expect(Buffer.byteLength(reply)).toBeGreaterThan(4096);
    expect(reply.endsWith('player_598, player_599')).toBe(true);
    rcon.close();
  });

  it('refuses a wrong password with RconAuthError', async () => {
    const p = await peer({ password: 'right' });
    await expect(RconConnection.open({ ...p.endpoint, password: 'wrong' })).rejects.toBeInstanceOf(RconAuthError);
    expect(p.refusedLogins).toBe(1);
  });

  it('runs concurrent commands one at a time, each with its own reply', async () => {
    const p = await peer({ fragmentBytes: 5 });
    const rcon = await RconConnection.open(p.endpoint);
    const replies = await Promise.all([rcon.command('whitelist add Alice'), rcon.command('whitelist add Bob'), rcon.command('whitelist list')]);
    expect(replies).toEqual(['Added Alice to the whitelist', 'Added Bob to the whitelist', 'There are 2 whitelisted player(s): Alice, Bob']);
    expect(p.droppedForCoalescing).toBe(0);
    rcon.close();
  });

  it('gives up on a command after its time-out and closes the connection', async () => {
    const p = await peer();
    const rcon = await RconConnection.open(p.endpoint, { connectTimeoutMs: 1000, commandTimeoutMs: 150 });
    p.silent = true;
    await expect(rcon.command('list')).rejects.toBeInstanceOf(RconTimeoutError);
    expect(rcon.closed).toBe(true);
    await expect(rcon.command('list')).rejects.toBeInstanceOf(RconUnavailableError);
  });

  it('times out a login that is never answered, and reports a refused connection', async () => {
    const held: Socket[] = [];
    const mute = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const { port } = mute.address() as AddressInfo;
    await expect(RconConnection.open({ host: '127.0.0.1', port, password: 'x' }, { connectTimeoutMs: 150, commandTimeoutMs: 150 })).rejects.toBeInstanceOf(
      RconTimeoutError,
    );
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => mute.close(() => resolve()));
    await expect(RconConnection.open({ host: '127.0.0.1', port, password: 'x' })).rejects.toBeInstanceOf(RconUnavailableError);
  });

  it('refuses a command longer than one request packet before sending it', async () => {
    const p = await peer();
    const rcon = await RconConnection.open(p.endpoint);
    await expect(rcon.command(`say ${'x'.repeat(1500)}`)).rejects.toBeInstanceOf(RconCommandTooLongError);
    expect(await rcon.command('list')).toMatch(/^There are 0/);
    rcon.close();
  });
});

describe('RCON pool', () => {
  it('keeps one connection per server and reuses it', async () => {
    const a = await peer();
    const b = await peer({ game: new PaperGame({ maxPlayers: 5 }) });
    const pool = new RconPool(async (server) => (server === 'a' ? a.endpoint : b.endpoint));
    for (let i = 0; i < 5; i++) {
      expect(await pool.command('a', 'list')).toMatch(/max of 20/);
      expect(await pool.command('b', 'list')).toMatch(/max of 5/);
    }
    await Promise.all([pool.command('a', 'list'), pool.command('a', 'list'), pool.command('a', 'list')]);
    expect([a.accepted, b.accepted, pool.size]).toEqual([1, 1, 2]);
    pool.close();
  });

  it('reconnects once, with the endpoint resolved again, when the connection died', async () => {
    const p = await peer();
    let resolved = 0;
    const pool = new RconPool(async () => {
      resolved += 1;
      return p.endpoint;
    });
    await pool.command('s', 'list');
    p.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await pool.command('s', 'whitelist list')).toBe('There are no whitelisted players');
    expect([p.accepted, resolved]).toEqual([2, 2]);
    pool.close();
  });

  it('does not retry a wrong password or a time-out', async () => {
    const p = await peer({ password: 'right' });
    const wrong = new RconPool(async () => ({ ...p.endpoint, password: 'wrong' }));
    await expect(wrong.command('s', 'list')).rejects.toBeInstanceOf(RconAuthError);
    expect(p.accepted).toBe(1);
    const pool = new RconPool(async () => p.endpoint, { commandTimeoutMs: 150 });
    await pool.command('s', 'list');
    p.silent = true;
    await expect(pool.command('s', 'list')).rejects.toBeInstanceOf(RconTimeoutError);
    expect(p.game.received.filter((c) => c === 'list')).toHaveLength(1);
    expect(pool.size).toBe(0);
    pool.close();
    wrong.close();
  });
});
