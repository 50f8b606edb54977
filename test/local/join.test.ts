import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalCluster } from '../../src/adapters/cluster/local/adapter.js';
import type { RunningService } from '../../src/service.js';
import { InternalApi, startGameListener } from '../../src/game-listener/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApps, jsonRequest, TOKENS, type TestDeps } from '../helpers/app.js';
import { login, pingMotd } from '../helpers/local-game/client.js';
import { processAlive, processesIn, standInCommand, testPortRange, until } from '../helpers/local-game/index.js';
import { startTestService } from '../helpers/service.js';
import { claimFor, worldMember } from '../helpers/worlds.js';

/**
 * The whole path on one machine: the service with CLUSTER=local and GAME_PORT, the stand-in game as
 * LOCAL_SERVER_COMMAND, and a Minecraft client (minecraft-protocol) that pings and logs in through
 * the listener with `<subdomain>.felis.test` in its handshake.
 */
describe('CLUSTER=local with GAME_PORT: a join wakes the server and is forwarded to it', () => {
  let dataDir: string;
  let service: RunningService;
  const ports = testPortRange();
  const env = () => ({
    CLUSTER: 'local',
    DATA_DIR: dataDir,
    LOCAL_SERVER_COMMAND: standInCommand(),
    LOCAL_EULA: 'true',
    LOCAL_PORT_RANGE: `${ports.first}-${ports.last}`,
    LOCAL_ONLINE_MODE: 'off',
    LOCAL_STOP_GRACE_SECONDS: '5',
    GAME_PORT: '0',
  });
  const cluster = () => service.deps.cluster as LocalCluster;
  const gamePort = () => service.game!.port;
  const host = (name: string) => `${name}.felis.test`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'felis-join-'));
    service = await startTestService(env());
    await cluster().createServer({ name: 'survival', subdomain: 'survival', labels: {}, autostartPolicy: 'public', memory: '1Gi' });
    await cluster().createServer({ name: 'private', subdomain: 'private', labels: {}, autostartPolicy: 'ownerOnly', memory: '1Gi' });
  });
  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a status ping for a sleeping server itself, without waking it', async () => {
    const { motd } = await pingMotd(gamePort(), host('survival'));
    expect(motd).toBe('survival is asleep: join to wake it');
    expect((await pingMotd(gamePort(), host('private'))).motd).toBe('private is asleep: wake it from the panel');
    expect(cluster().server('survival')!.status.phase).toBe('Stopped');
  });

  it('answers a ping for an unknown host with a MOTD that says so, and disconnects its login with a message', async () => {
    expect((await pingMotd(gamePort(), host('nowhere'))).motd).toBe('No server answers at nowhere.felis.test here');
    expect((await pingMotd(gamePort(), 'example.org')).motd).toBe('No server answers at example.org here');
    const outcome = await login(gamePort(), host('nowhere'), 'Alex');
    expect(outcome).toMatchObject({ joined: false, reason: 'No server answers at nowhere.felis.test. Check the address.' });
  });

  it('wakes a public server on a login, holds the player until it is ready, and forwards the login to the game', async () => {
    const outcome = await login(gamePort(), host('survival'), 'Steve');
    expect(outcome.joined).toBe(true);
    const up = cluster().server('survival')!;
    expect(up.status).toMatchObject({ phase: 'Running', ready: true });
    const console: string[] = [];
    const reading = (async () => {
      for await (const line of cluster().podLogs('survival', { follow: true, signal: AbortSignal.timeout(10_000) })) {
        console.push(line.line);
        if (/steve joined the game/i.test(line.line)) return;
      }
    })();
    await reading;
    expect(console.some((l) => l.includes('Steve joined the game'))).toBe(true);
    // The game sees the player: its player count over RCON.
    expect(await service.deps.rcon.command('survival', 'list')).toMatch(/^There are 1 of a max of 20 players online: Steve/);
    outcome.client.end('bye');
    // Once running, a ping is the game's own answer (its MOTD), forwarded.
    expect((await pingMotd(gamePort(), host('survival'))).motd).toBe('survival');
  });

  it('does not let a login wake a server whose policy needs a linked player: it says how to wake it', async () => {
    const outcome = await login(gamePort(), host('private'), 'Steve');
    expect(outcome.joined).toBe(false);
    expect(outcome.reason).toMatch(/^private is asleep, and only players its owner allows may wake it: wake it from the panel at panel\.felis\.test/);
    expect(cluster().server('private')!.spec.desiredState).toBe('Stopped');
  });

  it('keeps the wake rules (a guest’s fair share), and tells a held player to rejoin when the server is not ready within the hold', async () => {
    // A game whose RCON never answers never becomes ready; the hold (GAME_HOLD_SECONDS) ends first.
    await cluster().createServer({ name: 'slow', subdomain: 'slow', labels: {}, autostartPolicy: 'public', memory: '1Gi' });
    const folder = join(dataDir, 'worlds', 'slow');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'standin-no-rcon'), '');
    // Steve woke survival as a guest: his fair share is spent while it runs.
    const share = await login(gamePort(), host('slow'), 'Steve');
    expect(share).toMatchObject({ joined: false, reason: 'You already keep as many servers running as a guest may wake; join one of them.' });
    expect(cluster().server('slow')!.spec.desiredState).toBe('Stopped');
    // A second listener on the same internal face, with a one-second hold (the service's is 25 s).
    const short = await startGameListener({
      port: 0,
      host: '127.0.0.1',
      api: new InternalApi({ baseUrl: `http://127.0.0.1:${service.internal.port}`, token: TOKENS.proxy }),
      log: createLogger('silent'),
      holdMs: 1_000,
    });
    try {
      const outcome = await login(short.port, host('slow'), 'Alex');
      expect(outcome).toMatchObject({ joined: false, reason: 'slow is starting, rejoin in 10 s.' });
      expect(cluster().server('slow')!.spec.desiredState).toBe('Running');
    } finally {
      await short.close();
      await cluster().setDesiredState('slow', 'Stopped');
    }
  });

  it('backs up and restores the local folder of a stopped game', async () => {
    const deps = service.deps as TestDeps;
    const owner = await worldMember(deps);
    await claimFor(deps, 'survival', owner.id);
    await cluster().setDesiredState('survival', 'Stopped');
    await until(cluster(), 'survival', (s) => s.status.phase === 'Stopped');
    const folder = join(dataDir, 'worlds', 'survival');
    writeFileSync(join(folder, 'level.dat'), 'the world as it was');
    const { external } = createTestApps(deps);
    const backup = await external.request('/api/v1/servers/survival/backup', { method: 'POST', headers: owner.headers });
    expect(backup.status).toBe(202);
    await deps.worlds.jobs.idle();
    writeFileSync(join(folder, 'level.dat'), 'a world a creeper visited');
    const listed = (await (await external.request('/api/v1/backups', { headers: owner.headers })).json()) as { backups: Array<{ id: string; reason: string }> };
    const manual = listed.backups.find((b) => b.reason === 'manual')!;
    const restore = await external.request('/api/v1/servers/survival/restore-backup', jsonRequest('POST', { backup_id: manual.id }, owner.headers));
    expect(restore.status).toBe(202);
    await deps.worlds.jobs.idle();
    expect(readFileSync(join(folder, 'level.dat'), 'utf8')).toBe('the world as it was');
    // The restored folder still runs: the game comes up on it.
    await cluster().setDesiredState('survival', 'Running');
    await until(cluster(), 'survival', (s) => s.status.phase === 'Running' && s.status.ready);
  });

  it('a service restart stops the games cleanly, leaves no process, and the next service starts them again', async () => {
    const before = cluster().pidOf('survival')!;
    expect(processAlive(before)).toBe(true);
    await service.stop();
    expect(processAlive(before)).toBe(false);
    expect(processesIn(join(dataDir, 'worlds'))).toEqual([]);
    service = await startTestService(env());
    await until(cluster(), 'survival', (s) => s.status.phase === 'Running' && s.status.ready, 20_000);
    expect(cluster().pidOf('survival')).not.toBe(before);
    const outcome = await login(gamePort(), host('survival'), 'Steve');
    expect(outcome.joined).toBe(true);
    outcome.client.end('bye');
  });
});
