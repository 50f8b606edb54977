import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ENV, TOKENS } from '../helpers/app.js';
import { builtImage, spawnService, type ServiceProcess } from '../helpers/process.js';
import { exchange } from '../helpers/real-http.js';

const root = join(import.meta.dirname, '../..');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The `felis` verbs end to end, as an operator and a player meet them: the built service on its
 * embedded database in a folder of its own (the panel on panel.localhost, the README's default),
 * `felis user create` on that database while the service is stopped, `felis server create` through
 * the operator's door (the ops token), then a player's API key made in the panel's way and the
 * server and backup verbs with it against the running service.
 */
describe('the felis command against a running service', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-cli-api-'));
  const env = {
    ...TEST_ENV,
    DATABASE_URL: '',
    DATA_DIR: join(dir, 'data'),
    PANEL_HOST: 'panel.localhost',
    CONSOLE_HOST: 'console.localhost',
    LOG_LEVEL: 'info',
  };
  let image!: string;
  let service: ServiceProcess | undefined;
  let panel!: string;
  let key!: string;

  /** `felis ARGS…` as the operator runs it: the compiled command of the built image. */
  async function felis(args: string[], extra: Record<string, string> = {}): Promise<Ran> {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(image, 'dist/cli/felis.js'), ...args], {
        cwd: root,
        env: { PATH: process.env.PATH, ...env, LOG_LEVEL: 'silent', ...extra },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const withKey = (args: string[], k = key) => felis(args, { FELIS_URL: panel, FELIS_API_KEY: k });

  beforeAll(async () => {
    image = await builtImage();
  }, 180_000);

  afterAll(async () => {
    service?.child.kill('SIGTERM');
    await service?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('user create and user list act on the database while the service is stopped', async () => {
    const made = await felis(['user', 'create', 'alice', '--email', 'alice@example.com', '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ username: 'alice', role: 'user', email: 'alice@example.com' });
    expect((await felis(['user', 'create', 'staffer', '--role', 'admin'])).stdout).toMatch(/^made admin staffer \(/);
    const taken = await felis(['user', 'create', 'alice']);
    expect(taken).toMatchObject({ code: 1, stderr: 'felis: alice (or that e-mail) is taken\n' });
    expect(await felis(['user', 'create', 'x y'])).toMatchObject({ code: 2 });
    expect((await felis(['user', 'create', 'bob', '--role', 'emperor'])).stderr).toContain('--role');
    const list = await felis(['user', 'list', '--json']);
    expect((JSON.parse(list.stdout) as Array<{ username: string }>).map((u) => u.username)).toEqual(['alice', 'staffer']);
    expect((await felis(['user', 'list'])).stdout.split('\n')[0]).toMatch(/^ID\s+USERNAME\s+ROLE/);
  });

  it('server create goes through the ops door; the other verbs act with an API key', async () => {
    service = await spawnService(process.execPath, [join(image, 'dist/main.js')], env);
    panel = `http://panel.localhost:${service.externalPort}`;
    const ops = { FELIS_INTERNAL_URL: `http://127.0.0.1:${service.internalPort}`, SERVICE_TOKEN_OPS: TOKENS.ops };

    const created = await felis(['server', 'create', 'meadow', '--memory', '2Gi', '--json'], ops);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ name: 'meadow', subdomain: 'meadow', desiredState: 'Stopped' });
    expect(await felis(['server', 'create', 'meadow'], ops)).toMatchObject({ code: 1, stderr: expect.stringMatching(/^felis: 409 conflict: .*\(request /) });
    expect(await felis(['server', 'create', 'meadow2'], { ...ops, SERVICE_TOKEN_OPS: '' })).toMatchObject({ code: 2, stderr: expect.stringContaining('SERVICE_TOKEN_OPS') });

    // A player, as the lobby and the panel make one: a bind code for a game identity, redeemed in
    // the panel, the server claimed, and an API key made with the fresh sign-in.
    const internal = (method: string, path: string, body?: unknown) =>
      exchange(service!.internalPort, method, path, { Host: '127.0.0.1', Authorization: `Bearer ${TOKENS.limbo}` }, body);
    const bind = await internal('POST', '/api/v1/internal/account/link/code', { mc_uuid: '0f3a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b' });
    expect(bind.status).toBe(201);
    const host = { Host: `panel.localhost:${service.externalPort}`, Origin: panel };
    const signIn = await exchange(service.externalPort, 'POST', '/api/v1/auth/bind', host, { code: bind.body.code });
    expect(signIn.status, signIn.text).toBe(200);
    const cookie = { ...host, Cookie: signIn.setCookie.map((c) => c.split(';')[0]).join('; ') };
    expect((await exchange(service.externalPort, 'POST', '/api/v1/servers/meadow/claim', cookie)).status).toBe(200);
    const made = await exchange(service.externalPort, 'POST', '/api/v1/account/api-keys', cookie, { name: 'cli test' });
    expect(made.status, made.text).toBe(201);
    key = made.body.secret as string;

    const list = await withKey(['server', 'list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'meadow', owned: true })]);
    expect((await withKey(['server', 'list'])).stdout).toMatch(/^NAME\s+SUBDOMAIN\s+PHASE\s+PLAYERS\s+YOURS\nmeadow\s+meadow\s+Stopped\s+0\/\d+\s+owner\n$/);

    const woken = await withKey(['server', 'wake', 'meadow', '--wait', '--timeout', '60']);
    expect(woken.code, woken.stderr).toBe(0);
    expect(woken.stdout).toBe('meadow: Running\n');
    expect(woken.stderr).toMatch(/^meadow: \w+/);
    expect(JSON.parse((await withKey(['server', 'status', 'meadow', '--json'])).stdout)).toMatchObject({ name: 'meadow', phase: 'Running', ready: true });

    const stopped = await withKey(['server', 'stop', 'meadow', '--wait', '--timeout', '60']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('meadow: Stopped\n');

    const backup = await withKey(['backup', 'create', 'meadow', '--wait', '--timeout', '120', '--json']);
    expect(backup.code, backup.stderr).toBe(0);
    const job = JSON.parse(backup.stdout) as { state: string; backup_id: string };
    expect(job.state).toBe('succeeded');
    expect(backup.stderr).toContain('backup of meadow: succeeded');
    const backups = JSON.parse((await withKey(['backup', 'list', '--server', 'meadow', '--json'])).stdout) as Array<{ id: string; reason: string }>;
    expect(backups).toEqual([expect.objectContaining({ id: job.backup_id, reason: 'manual' })]);
  });

  it('says what is wrong in one line: no key, a wrong key, a server not yours, a service not there', async () => {
    expect(await felis(['server', 'list'])).toMatchObject({ code: 2, stderr: expect.stringContaining('FELIS_API_KEY') });
    expect(await felis(['server', 'list'], { FELIS_API_KEY: 'hunter2' })).toMatchObject({ code: 2, stderr: expect.stringContaining('does not look like an API key') });
    const wrong = await withKey(['server', 'list'], `felis_${'x'.repeat(40)}`);
    expect(wrong).toMatchObject({ code: 3, stderr: expect.stringMatching(/^felis: 401 unauthorized: .*\(request [^)]+\)\n$/) });
    const missing = await withKey(['server', 'status', 'nowhere']);
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/^felis: 404 /) });
    expect(await withKey(['server', 'status', '../etc'])).toMatchObject({ code: 2, stderr: expect.stringContaining('not a server name') });
    expect(await withKey(['server', 'wake'])).toMatchObject({ code: 2 });
    expect(await felis(['server'])).toMatchObject({ code: 2, stderr: 'felis server needs one of: create, list, status, wake, stop\n' });
    const away = await felis(['server', 'list'], { FELIS_URL: 'http://127.0.0.1:9', FELIS_API_KEY: key });
    expect(away).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot reach the service at http://127.0.0.1:9') });
  });
});
