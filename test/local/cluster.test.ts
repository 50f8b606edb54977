import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GameProcess } from '../../src/adapters/cluster/local/process.js';
import { LocalCluster, type LocalClusterOptions } from '../../src/adapters/cluster/local/adapter.js';
import { ClusterNoPodError, type ServerSpec } from '../../src/adapters/cluster/types.js';
import { RconConnection } from '../../src/adapters/rcon/client.js';
import { createLogger } from '../../src/lib/logger.js';
import { processAlive, processesIn, standInCommand, testPortRange, until } from '../helpers/local-game/index.js';

const log = createLogger('silent');
const open: LocalCluster[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'felis-local-'));
  dirs.push(dir);
  return dir;
}

async function cluster(dir: string, options: Partial<LocalClusterOptions> = {}): Promise<LocalCluster> {
  const c = await LocalCluster.open({
    worldsRoot: join(dir, 'worlds'),
    stateDir: join(dir, 'local'),
    command: standInCommand(),
    jar: join(dir, 'server.jar'),
    eula: true,
    ports: testPortRange(),
    onlineMode: false,
    log,
    probeIntervalMs: 100,
    restartBackoffMs: 50,
    stopGraceMs: 5_000,
    ...options,
  });
  open.push(c);
  return c;
}

const spec = (name: string, extra: Partial<ServerSpec> = {}): ServerSpec => ({ name, subdomain: name, labels: {}, memory: '1Gi', ...extra });
const running = (c: LocalCluster, name: string) => until(c, name, (s) => s.status.phase === 'Running' && s.status.ready);

/** The console's lines; with `follow`, every line until the game ends. */
async function consoleLines(c: LocalCluster, name: string, follow = false): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of c.podLogs(name, { follow, signal: new AbortController().signal })) lines.push(line.line);
  return lines;
}

describe('CLUSTER=local: game servers as child processes', () => {
  it('starts a game in its folder with the owned properties and the EULA, Running once RCON answers, on 127.0.0.1', async () => {
    const dir = dataDir();
    const c = await cluster(dir);
    await c.createServer(spec('survival', { displayName: 'Süd: #1' }));
    await c.setDesiredState('survival', 'Running');
    const up = await running(c, 'survival');
    const folder = join(dir, 'worlds', 'survival');
    const properties = readFileSync(join(folder, 'server.properties'), 'utf8');
    const endpoint = await c.rconEndpoint('survival');
    expect(properties).toContain('server-ip=127.0.0.1\n');
    expect(properties).toContain('enable-rcon=true\n');
    expect(properties).toContain(`rcon.port=${endpoint.port}\n`);
    expect(properties).toContain(`rcon.password=${endpoint.password}\n`);
    expect(properties).toContain('motd=S\\u00fcd\\: \\#1\n');
    expect(up.status.endpointAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(properties).toContain(`server-port=${up.status.endpointAddress!.split(':')[1]}\n`);
    expect(readFileSync(join(folder, 'eula.txt'), 'utf8')).toMatch(/^eula=true$/m);
    expect(await consoleLines(c, 'survival')).toEqual(expect.arrayContaining([expect.stringMatching(/Done \(.*\)! For help/)]));
  });

  it('runs commands over RCON, stops with save-all flush and stop, and leaves no process behind', async () => {
    const dir = dataDir();
    const c = await cluster(dir);
    await c.createServer(spec('lobby', { desiredState: 'Running' }));
    await running(c, 'lobby');
    const pid = c.pidOf('lobby')!;
    const session = await RconConnection.open(await c.rconEndpoint('lobby'));
    expect(await session.command('list')).toMatch(/^There are 0 of a max of 20 players online/);
    await session.command('say hello from the panel');
    session.close();
    await c.setDesiredState('lobby', 'Stopped');
    await until(c, 'lobby', (s) => s.status.phase === 'Stopped');
    expect(processAlive(pid)).toBe(false);
    expect(processesIn(dir)).toEqual([]);
    await expect(c.rconEndpoint('lobby')).rejects.toBeInstanceOf(ClusterNoPodError);
  });

  it('keeps the console of the run: the RCON say, the save and the stop, with the pod log rules (tail)', async () => {
    const c = await cluster(dataDir());
    await c.createServer(spec('logs', { desiredState: 'Running' }));
    await running(c, 'logs');
    const session = await RconConnection.open(await c.rconEndpoint('logs'));
    await session.command('say hi');
    session.close();
    const all = await consoleLines(c, 'logs');
    expect(all.some((l) => l.includes('[Rcon] hi'))).toBe(true);
    const tail: string[] = [];
    for await (const line of c.podLogs('logs', { tailLines: 1, follow: false, signal: new AbortController().signal })) tail.push(line.line);
    expect(tail).toEqual([all.at(-1)]);
    // A followed log ends when the game ends.
    const followed = consoleLines(c, 'logs', true);
    await c.setDesiredState('logs', 'Stopped');
    const seen = await followed;
    expect(seen.some((l) => /saved the game/i.test(l))).toBe(true);
    expect(seen.some((l) => /stopping the server/i.test(l))).toBe(true);
  });

  it('gives the game a clean environment: none of the service’s secrets', async () => {
    process.env.FELIS_TEST_SECRET = 'do-not-leak';
    try {
      const dir = dataDir();
      const c = await cluster(dir, { command: `env > env.txt; ${standInCommand()}` });
      await c.createServer(spec('clean', { desiredState: 'Running' }));
      await running(c, 'clean');
      const env = readFileSync(join(dir, 'worlds', 'clean', 'env.txt'), 'utf8');
      expect(env).not.toContain('do-not-leak');
      expect(env).not.toMatch(/^(SERVICE_TOKEN|DATABASE_URL|SETUP_TOKEN|BACKUP_S3)/m);
      expect(env).toMatch(/^JAVA_MEMORY=/m);
      expect(env).toMatch(/^SERVER_JAR=/m);
    } finally {
      delete process.env.FELIS_TEST_SECRET;
    }
  });

  it('refuses a start without the EULA, with a message that says so', async () => {
    const c = await cluster(dataDir(), { eula: false });
    await c.createServer(spec('noeula'));
    await c.setDesiredState('noeula', 'Running');
    const failed = await until(c, 'noeula', (s) => s.status.phase === 'Failed');
    expect(failed.status.startGaveUp).toBe(true);
    expect((await consoleLines(c, 'noeula')).join('\n')).toMatch(/EULA.*LOCAL_EULA=true/);
  });

  it('takes a crash as a failed start and starts the game again, within the restart budget', async () => {
    const c = await cluster(dataDir());
    await c.createServer(spec('crashy', { desiredState: 'Running' }));
    await running(c, 'crashy');
    const first = c.pidOf('crashy')!;
    process.kill(-first, 'SIGKILL');
    const failed = await until(c, 'crashy', (s) => s.status.phase === 'Failed');
    expect(failed.status).toMatchObject({ autoRestarts: 1, startGaveUp: false });
    const again = await running(c, 'crashy');
    expect(again.status.autoRestarts).toBe(1);
    expect(c.pidOf('crashy')).not.toBe(first);
  });

  it('gives up after the budget: a game that always dies is Failed with startGaveUp after 3 retries', async () => {
    const c = await cluster(dataDir(), { command: 'echo "Exception in server tick loop" >&2; exit 3' });
    await c.createServer(spec('broken', { desiredState: 'Running' }));
    const gaveUp = await until(c, 'broken', (s) => s.status.startGaveUp);
    expect(gaveUp.status).toMatchObject({ phase: 'Failed', autoRestarts: 3 });
    expect((await consoleLines(c, 'broken')).join('\n')).toMatch(/exception in server tick loop/i);
    // A wake from the panel starts it over with a fresh budget.
    await c.setDesiredState('broken', 'Running');
    expect(c.server('broken')!.status).toMatchObject({ phase: 'Starting', autoRestarts: 0, startGaveUp: false });
  });

  it('counts a start whose RCON never answers as failed after the start time-out, and stops a hung game by a signal', async () => {
    const c = await cluster(dataDir(), { command: standInCommand({ STANDIN_NO_RCON: '1' }), startTimeoutMs: 1_500, maxAutoRestarts: 0 });
    await c.createServer(spec('hung', { desiredState: 'Running' }));
    const starting = await until(c, 'hung', (s) => s.status.phase === 'Starting' && c.pidOf('hung') !== undefined);
    expect(starting.status.ready).toBe(false);
    const pid = c.pidOf('hung')!;
    await until(c, 'hung', (s) => s.status.startGaveUp);
    expect(processAlive(pid)).toBe(false);
  });

  it('stops a game whose RCON does not answer with a TERM, at once', async () => {
    const c = await cluster(dataDir(), { command: standInCommand({ STANDIN_NO_RCON: '1' }), stopGraceMs: 60_000 });
    await c.createServer(spec('deaf', { desiredState: 'Running' }));
    await until(c, 'deaf', () => c.pidOf('deaf') !== undefined);
    const pid = c.pidOf('deaf')!;
    await c.setDesiredState('deaf', 'Stopped');
    // A 60 s grace is never waited: RCON refused, so the TERM went at once and the game stopped on it.
    await until(c, 'deaf', (s) => s.status.phase === 'Stopped', 15_000);
    expect(processAlive(pid)).toBe(false);
  });

  it('stops an empty game after its idle period, as the controller does', async () => {
    const c = await cluster(dataDir(), { idleGraceMs: 0 });
    await c.createServer(spec('idle', { desiredState: 'Running', idleStopSeconds: 1 }));
    const pid = (await running(c, 'idle')) && c.pidOf('idle')!;
    const stopped = await until(c, 'idle', (s) => s.status.phase === 'Stopped');
    expect(stopped.spec.desiredState).toBe('Stopped');
    expect(processAlive(pid)).toBe(false);
  });

  it('an emergency stop kills the game at once (no save, no grace) and records the stop', async () => {
    const c = await cluster(dataDir(), { stopGraceMs: 60_000 });
    await c.createServer(spec('panic', { desiredState: 'Running' }));
    await running(c, 'panic');
    const pid = c.pidOf('panic')!;
    const followed = consoleLines(c, 'panic', true);
    const stopped = await c.emergencyStop('panic');
    expect(stopped.spec.desiredState).toBe('Stopped');
    expect(stopped.status.phase).toBe('Stopped');
    expect(processAlive(pid)).toBe(false);
    const seen = await followed;
    expect(seen.some((l) => /done \(/i.test(l))).toBe(true);
    expect(seen.some((l) => /saved the game|stopping the server/i.test(l))).toBe(false);
  });

  it('a service restart stops the games cleanly and the next life starts them again; a killed life’s game is ended', async () => {
    const dir = dataDir();
    const first = await cluster(dir);
    await first.createServer(spec('kept', { desiredState: 'Running' }));
    await running(first, 'kept');
    const before = first.pidOf('kept')!;
    await first.close();
    open.splice(open.indexOf(first), 1);
    expect(processAlive(before)).toBe(false);
    expect(readFileSync(join(dir, 'worlds', 'kept', 'server.properties'), 'utf8')).toContain('enable-rcon=true');

    const second = await cluster(dir);
    await running(second, 'kept');
    expect(second.pidOf('kept')).not.toBe(before);
    await second.close();

    // A life killed outright leaves its game; the pid file names it, and the next life ends it.
    const left = await GameProcess.start({
      name: 'orphan',
      folder: join(dir, 'worlds', 'kept'),
      command: 'exec sleep 300',
      env: { PATH: process.env.PATH },
      pidDir: join(dir, 'local', 'pids'),
      now: () => new Date(),
    });
    const third = await cluster(dir);
    expect(processAlive(left.pid!)).toBe(false);
    await third.close();
  });
});
