import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { EmbeddedDatabaseBusy, LOCK_FILE, lockEmbeddedDatabase } from '../../src/db/embedded-lock.js';
import { openDatabase } from '../../src/db/client.js';
import { setupTokens } from '../../src/db/schema/auth.js';
import { startService } from '../../src/service.js';
import { databaseFailure, refuseEmbeddedInKubernetes, StartupError, startupFailureLine } from '../../src/startup-failure.js';
import { TEST_ENV } from '../helpers/app.js';
import { withDatabase } from '../global-setup.js';
import { captureLog } from '../helpers/log.js';
import { builtImage } from '../helpers/process.js';
import { freePort } from '../helpers/ports.js';
import { inject } from 'vitest';

function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port })));
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * The built service as the image runs it (`node dist/main.js`; test/helpers/process.ts builtImage,
 * a cold start 2 to 5 times as fast as under tsx): exit code, stdout lines, stderr.
 */
async function runMain(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const main = join(await builtImage(), 'dist/main.js');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH, ...TEST_ENV, INTERNAL_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 110_000);
    child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
  });
}

/**
 * A port in use, a bad setting, a database that is not there: one line naming what to change, no
 * stack trace, and nothing half-started (no face left listening, the database closed, no owner
 * token minted or logged).
 */
describe('start-up failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-startup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const config = (env: Record<string, string>) => loadConfig({ ...TEST_ENV, INTERNAL_PORT: '0', EXTERNAL_PORT: '0', ...env } as NodeJS.ProcessEnv);

  // A new embedded database in a folder and a second open of it: 3 s here, over 20 s on a loaded machine.
  it('a port in use: names the variable, releases the face that did listen, closes the database, mints no token', { timeout: 120_000 }, async () => {
    const held = await holdPort();
    const internalPort = await freePort();
    const dataDir = join(dir, 'port');
    const captured = captureLog('info');
    try {
      const failure = await startService(config({ DATABASE_URL: '', DATA_DIR: dataDir, INTERNAL_PORT: String(internalPort), EXTERNAL_PORT: String(held.port) }), captured.log).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as Error).message).toBe(
        `port ${held.port} on 127.0.0.1 (EXTERNAL_PORT) is in use, perhaps by another Felis: stop what holds it, or set EXTERNAL_PORT to a free port`,
      );
      // The internal face listened before the external one failed; it is closed again.
      expect(await answers(internalPort)).toBe(false);
      const lines = captured.lines();
      expect(lines.some((l) => l.msg === 'listening')).toBe(false);
      expect(lines.some((l) => 'setup_token' in l)).toBe(false);
      // The database is closed (its lock released) and holds no owner token.
      expect(existsSync(join(dataDir, 'db', LOCK_FILE))).toBe(false);
      const reopened = await openDatabase({ url: undefined, dataDir, migrate: false });
      try {
        expect(await reopened.db.select().from(setupTokens)).toEqual([]);
      } finally {
        await reopened.close();
      }
    } finally {
      held.server.close();
    }
  });

  it('a database that is not there: PostgreSQL not up yet (waited out), a host that does not resolve, a missing database, a DATA_DIR that cannot be a folder', { timeout: 60_000 }, async () => {
    // A PostgreSQL that refuses connections is not up yet: the service starts and answers 503
    // until it is (issue 30, item 8; test/faults/database-at-start.test.ts), logging the same hint.
    const captured = captureLog('info');
    const waiting = await startService(config({ DATABASE_URL: 'postgres://felis:secret@127.0.0.1:1/felis' }), captured.log);
    try {
      const line = captured.lines().find((l) => l.msg === 'database unreachable at start-up: answering 503 until it answers');
      expect(line?.reason).toBe('no PostgreSQL answers at 127.0.0.1:1 (connection refused): start it, or set DATABASE_URL (unset: the embedded database in DATA_DIR)');
      expect(JSON.stringify(captured.lines())).not.toContain('secret');
    } finally {
      await waiting.stop();
    }
    const unresolved = await startService(config({ DATABASE_URL: 'postgres://felis:secret@felis-no-such-host.invalid:5432/felis' }), captureLog('silent').log).catch((err: unknown) => err);
    expect(unresolved).toBeInstanceOf(StartupError);
    expect((unresolved as Error).message).toBe('the database host felis-no-such-host.invalid does not resolve: correct the host in DATABASE_URL');

    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a folder');
    const notDir = await startService(config({ DATABASE_URL: '', DATA_DIR: file }), captureLog('silent').log).catch((err: unknown) => err);
    expect(notDir).toBeInstanceOf(StartupError);
    expect((notDir as Error).message).toMatch(new RegExp(`^DATA_DIR ${file} is not a folder this user can write \\(ENOTDIR on .*\\): set DATA_DIR, or DATABASE_URL for PostgreSQL$`));

    // The server answers but has no such database (PostgreSQL runs only: the server is theirs).
    const pg = inject('postgresTemplate');
    if (pg) {
      const missing = withDatabase(pg.url, 'felis_no_such_database');
      const absent = await startService(config({ DATABASE_URL: missing }), captureLog('silent').log).catch((err: unknown) => err);
      expect(absent).toBeInstanceOf(StartupError);
      expect((absent as Error).message).toMatch(/^database "felis_no_such_database" does not exist on .*: create it \(createdb -h .* felis_no_such_database\), or set DATABASE_URL$/);
    }
  });

  it('a read-only DATA_DIR: names the file system, not the ENOENT of a recursive mkdir', { timeout: 60_000 }, async (ctx) => {
    // A read-only bind mount of a folder of ours: only where this process may mount (root in CI).
    const source = join(dir, 'ro-source');
    const mounted = join(dir, 'ro');
    mkdirSync(source);
    mkdirSync(mounted);
    try {
      execFileSync('mount', ['--bind', source, mounted], { stdio: 'ignore' });
    } catch {
      ctx.skip();
    }
    try {
      execFileSync('mount', ['-o', 'remount,bind,ro', mounted], { stdio: 'ignore' });
      for (const dataDir of [join(mounted, 'data'), mounted]) {
        const failure = await startService(config({ DATABASE_URL: '', DATA_DIR: dataDir }), captureLog('silent').log).catch((err: unknown) => err);
        expect(failure).toBeInstanceOf(StartupError);
        expect((failure as Error).message).toBe(`DATA_DIR ${dataDir} is not writable: ${mounted} is on a read-only file system: set DATA_DIR to a writable folder, or DATABASE_URL for PostgreSQL`);
      }
    } finally {
      execFileSync('umount', [mounted], { stdio: 'ignore' });
    }
  });

  it('an embedded database another live process holds: refused before anything opens it; a stale lock is taken over', async () => {
    const folder = join(dir, 'locked');
    mkdirSync(folder, { recursive: true });
    // pid 1 is always alive: another process holds the folder.
    writeFileSync(join(folder, LOCK_FILE), '1\n');
    expect(() => lockEmbeddedDatabase(folder, { waitMs: 0 })).toThrow(EmbeddedDatabaseBusy);
    const busy = databaseFailure(new EmbeddedDatabaseBusy(folder, 1), { databaseUrl: undefined, dataDir: dir });
    expect(busy.message).toBe(
      `the embedded database in ${folder} is open in another Felis process (pid 1): stop that process first, or give this one its own DATA_DIR (a second service on one embedded database would corrupt it)`,
    );
    expect(databaseFailure(new EmbeddedDatabaseBusy(folder, 1), { databaseUrl: undefined, dataDir: dir }, { command: true }).message).toContain('stop the service first');
    // A pid that is gone: its lock is stale, and the next opener takes it.
    const gone = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.once('exit', () => resolve(child.pid!));
    });
    writeFileSync(join(folder, LOCK_FILE), `${gone}\n`);
    const release = lockEmbeddedDatabase(folder);
    expect(existsSync(join(folder, LOCK_FILE))).toBe(true);
    release();
    expect(existsSync(join(folder, LOCK_FILE))).toBe(false);
  });

  it('a holder SIGKILLed a moment ago (dying, or a zombie its parent has not reaped) does not keep the next start out', async () => {
    const folder = join(dir, 'killed');
    mkdirSync(folder, { recursive: true });
    const lock = join(folder, LOCK_FILE);
    // A real process holds the folder as the service does: its pid in the lock file, then it runs on.
    const holder = spawn(process.execPath, ['-e', `require('node:fs').writeFileSync(${JSON.stringify(lock)}, process.pid + '\\n'); console.log('held'); setInterval(() => {}, 1000);`]);
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    holder.kill('SIGKILL');
    // At once, in the same tick: the child is not reaped yet (this process is its parent).
    const release = lockEmbeddedDatabase(folder);
    expect(existsSync(lock)).toBe(true);
    release();
    await new Promise((resolve) => (holder.exitCode !== null || holder.signalCode !== null ? resolve(undefined) : holder.once('exit', resolve)));
  });

  it('refuses the embedded database inside a Kubernetes pod, and prints known failures on one line', () => {
    const pod = { KUBERNETES_SERVICE_HOST: '10.0.0.1' };
    expect(() => refuseEmbeddedInKubernetes({ databaseUrl: undefined }, pod)).toThrow(/embedded database is refused inside Kubernetes.*set DATABASE_URL=postgres/);
    expect(() => refuseEmbeddedInKubernetes({ databaseUrl: 'memory:' }, pod)).toThrow(StartupError);
    expect(() => refuseEmbeddedInKubernetes({ databaseUrl: 'postgres://db/felis' }, pod)).not.toThrow();
    expect(() => refuseEmbeddedInKubernetes({ databaseUrl: undefined }, {})).not.toThrow();
    expect(() => refuseEmbeddedInKubernetes({ databaseUrl: undefined, singleReplica: true }, pod)).not.toThrow();

    let configError: unknown;
    try {
      loadConfig({ INTERNAL_PORT: 'eighty', LOG_LEVEL: 'loud' } as NodeJS.ProcessEnv);
    } catch (err) {
      configError = err;
    }
    expect(startupFailureLine(configError)).toBe('invalid configuration: INTERNAL_PORT: must be a port number from 0 to 65535; LOG_LEVEL: Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"');
    const unknown = new Error('something else');
    expect(startupFailureLine(unknown)).toBe('failed to start: something else (LOG_LEVEL=debug prints where)');
    expect(startupFailureLine(unknown, 'debug')).toContain('at ');
  });

  it('refuses the embedded database with CLUSTER=kubernetes, naming DATABASE_URL, unless SINGLE_REPLICA=true', () => {
    const kube = { cluster: 'kubernetes' as const };
    for (const databaseUrl of [undefined, 'memory:']) {
      expect(() => refuseEmbeddedInKubernetes({ ...kube, databaseUrl }, {})).toThrow(StartupError);
      expect(() => refuseEmbeddedInKubernetes({ ...kube, databaseUrl }, {})).toThrow(/refused with CLUSTER=kubernetes.*set DATABASE_URL=postgres:\/\/….*SINGLE_REPLICA=true/);
      expect(() => refuseEmbeddedInKubernetes({ ...kube, databaseUrl, singleReplica: true }, {})).not.toThrow();
    }
    expect(() => refuseEmbeddedInKubernetes({ ...kube, databaseUrl: 'postgres://db/felis' }, {})).not.toThrow();
    expect(() => refuseEmbeddedInKubernetes({ cluster: 'simulated', databaseUrl: undefined }, {})).not.toThrow();
    // The setting is read from the environment, strictly.
    expect(loadConfig({ CLUSTER: 'kubernetes', SINGLE_REPLICA: 'true' } as NodeJS.ProcessEnv).singleReplica).toBe(true);
    expect(loadConfig({ CLUSTER: 'kubernetes' } as NodeJS.ProcessEnv).singleReplica).toBe(false);
    expect(() => loadConfig({ SINGLE_REPLICA: 'yes' } as NodeJS.ProcessEnv)).toThrow(/SINGLE_REPLICA/);
  });

  it('the process: CLUSTER=kubernetes with no DATABASE_URL stops at start with one line naming DATABASE_URL', { timeout: 120_000 }, async () => {
    const run = await runMain({ DATABASE_URL: '', CLUSTER: 'kubernetes', DATA_DIR: join(dir, 'kube'), EXTERNAL_PORT: '0', INTERNAL_PORT: '0' });
    expect(run.code).toBe(1);
    const lines = run.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^felis: the embedded database is refused with CLUSTER=kubernetes.*DATABASE_URL/);
    expect(run.stdout).not.toContain('"listening"');
    // Nothing was opened: the refusal comes before the embedded database is made.
    expect(existsSync(join(dir, 'kube', 'db'))).toBe(false);
  });

  // Two cold starts of the service, side by side.
  it('the process: one line on stderr, exit 1, no stack, nothing listening, no token (a port in use, a database host that does not resolve)', { timeout: 120_000 }, async () => {
    const held = await holdPort();
    try {
      const [port, database] = await Promise.all([
        runMain({ DATABASE_URL: '', DATA_DIR: join(dir, 'process'), EXTERNAL_PORT: String(held.port) }),
        runMain({ DATABASE_URL: 'postgres://postgres@felis-no-such-host.invalid:5432/felis', EXTERNAL_PORT: '0' }),
      ]);
      for (const [run, expected] of [
        [port, `felis: port ${held.port} on 127.0.0.1 (EXTERNAL_PORT) is in use`],
        [database, 'felis: the database host felis-no-such-host.invalid does not resolve'],
      ] as const) {
        expect(run.code).toBe(1);
        expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
        expect(run.stderr).toContain(expected);
        expect(run.stderr).not.toMatch(/\n\s+at /);
        expect(run.stdout).not.toContain('"listening"');
        expect(run.stdout).not.toContain('setup_token');
        // The database guard's "answering 503" belongs to a running service, not a failed start.
        expect(run.stdout).not.toContain('database unreachable');
      }
    } finally {
      held.server.close();
    }
  });
});
