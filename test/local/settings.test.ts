import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { encodeVarInt, listenerPlayerUuid, parseHandshake, readPacket } from '../../src/game-listener/protocol.js';
import { TEST_ENV } from '../helpers/app.js';

const load = (env: Record<string, string>) => loadConfig({ ...TEST_ENV, ...env } as NodeJS.ProcessEnv);

describe('CLUSTER=local and GAME_PORT settings', () => {
  it('reads the local cluster and listener settings, with the local hosts as on the simulated cluster', () => {
    const config = loadConfig({ CLUSTER: 'local', GAME_PORT: '25565', SERVICE_TOKEN_PROXY: 'a-proxy-token-0123456789', LOCAL_EULA: 'true', LOCAL_PORT_RANGE: '30000-30099' } as NodeJS.ProcessEnv);
    expect(config.local).toMatchObject({ eula: true, ports: { first: 30000, last: 30099 }, onlineMode: true, stopGraceMs: 30_000 });
    expect(config.game).toEqual({ port: 25565, host: '127.0.0.1', maxConnections: 512, holdMs: 25_000 });
    expect(config.rootDomain).toBe('localhost');
  });

  it('refuses GAME_PORT without the proxy token the listener asks with, and a bad port range, naming the variable', () => {
    expect(() => load({ GAME_PORT: '25565', SERVICE_TOKEN_PROXY: '' })).toThrow(ConfigError);
    expect(() => load({ GAME_PORT: '25565', SERVICE_TOKEN_PROXY: '' })).toThrow(/GAME_PORT: .*SERVICE_TOKEN_PROXY/);
    expect(() => load({ LOCAL_PORT_RANGE: '30000' })).toThrow(/LOCAL_PORT_RANGE/);
    expect(() => load({ LOCAL_PORT_RANGE: '30100-30000' })).toThrow(/LOCAL_PORT_RANGE/);
    expect(() => load({ GAME_PORT: '0x63dd' })).toThrow(/GAME_PORT/);
    expect(() => load({ GAME_HOLD_SECONDS: '30' })).toThrow(/GAME_HOLD_SECONDS/);
  });
});

describe('the listener’s reading of a handshake', () => {
  const handshake = (address: string) => {
    const text = Buffer.from(address);
    const body = Buffer.concat([encodeVarInt(0), encodeVarInt(765), encodeVarInt(text.length), text, Buffer.from([0x63, 0xdd]), encodeVarInt(2)]);
    return Buffer.concat([encodeVarInt(body.length), body]);
  };

  it('takes the host without a Forge marker or a trailing dot, in lower case', () => {
    expect(parseHandshake(readPacket(handshake('Survival.Felis.Test.\0FML3\0'))!).host).toBe('survival.felis.test');
    expect(parseHandshake(readPacket(handshake('survival'))!)).toEqual({ protocol: 765, host: 'survival', port: 25565, intent: 2 });
  });

  it('makes a wake UUID of its own namespace from a name: the same for a name, never the offline-mode UUID', () => {
    expect(listenerPlayerUuid('Steve')).toBe(listenerPlayerUuid('Steve'));
    expect(listenerPlayerUuid('Steve')).not.toBe(listenerPlayerUuid('Alex'));
    // minecraft-protocol's (and the game's) offline UUID of Steve.
    expect(listenerPlayerUuid('Steve')).not.toBe('5627dd98-e6be-3c21-b8a8-e92344183641');
    expect(listenerPlayerUuid('Steve')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
