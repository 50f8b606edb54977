import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import type { EmbeddedDatabaseHandle } from '../../src/db/embedded.js';
import { createTestApps, createTestDeps, errorOf, type TestDeps } from '../helpers/app.js';
import { captureLog } from '../helpers/log.js';
import { createUser, signIn, type SignedIn } from '../helpers/sessions.js';

/** Polls `check` until it holds, at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`did not hold within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Always the embedded default, the service's own path (`npm start`): PGlite on its own thread
// behind a socket, reached with postgres-js. The suite's other databases stay in-process.
describe('the embedded database on its own thread', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'felis-embedded-'));
  let database: EmbeddedDatabaseHandle;
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let owner: SignedIn;
  let username: string;
  const dbLog = captureLog();

  beforeAll(async () => {
    database = (await openDatabase({ url: undefined, dataDir, log: dbLog.log })) as EmbeddedDatabaseHandle;
    deps = createTestDeps(database);
    apps = createTestApps(deps);
    const user = await createUser(deps);
    username = user.username;
    owner = await signIn(deps, { userId: user.id });
  }, 180_000); // a new folder: initdb and migrations, minutes on a loaded 2-core machine (issue 46)

  afterAll(async () => {
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers signed-in reads through postgres-js on the socket', async () => {
    expect(database.kind).toBe('pglite');
    const me = await apps.external.request('/api/v1/me', { headers: owner.headers });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe(username);
  });

  it('answers 503 unavailable while its thread is gone, then recovers on its own', async () => {
    await database.crashForTest();

    // Never a hung request: the first answers at once with the documented 503.
    const during = await apps.external.request('/api/v1/me', { headers: owner.headers });
    expect(during.status).toBe(503);
    expect(during.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect((await errorOf(during)).code).toBe('unavailable');
    expect((await apps.external.request('/healthz')).status).toBe(200);

    // The thread is started again on the same folder and the guard lets statements through.
    await eventually(async () => (await apps.external.request('/api/v1/me', { headers: owner.headers })).status === 200, 30_000);
    const lines = dbLog.lines().map((l) => l.msg);
    expect(lines).toContain('embedded database thread stopped: starting it again');
    expect(lines).toContain('database unreachable: answering 503 until it answers again');
    expect(lines).toContain('embedded database thread started again');
    expect(lines).toContain('database answers again');
    expect(deps.captured.lines().filter((l) => l.msg === 'unexpected error')).toEqual([]);
  });

  it('keeps what users made across a close and a reopen of the folder', async () => {
    await database.close();
    database = (await openDatabase({ url: undefined, dataDir })) as EmbeddedDatabaseHandle;
    deps = createTestDeps(database);
    apps = createTestApps(deps);
    const me = await apps.external.request('/api/v1/me', { headers: owner.headers });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { username: string }).username).toBe(username);
  });
});
