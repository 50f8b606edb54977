import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite, type DatabaseHandle } from '../../src/db/client.js';
import { bearer, createTestApps, createTestDeps, errorOf, type TestDeps } from '../helpers/app.js';
import { createUser, signIn, type SignedIn } from '../helpers/sessions.js';

// Always the embedded database, whatever TEST_DATABASE_URL says: this is PGlite's own failure.
describe('an embedded database closed under the service', () => {
  let client: PGlite;
  let database: DatabaseHandle;
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let owner: SignedIn;

  beforeAll(async () => {
    client = await PGlite.create();
    database = await openPglite(undefined, client);
    await database.migrate();
    deps = createTestDeps(database);
    apps = createTestApps(deps);
    owner = await signIn(deps, { userId: (await createUser(deps)).id });
  });

  afterAll(() => database.close());

  it('answers 503 unavailable on database routes and keeps serving the rest', async () => {
    expect((await apps.external.request('/api/v1/me', { headers: owner.headers })).status).toBe(200);
    await client.close(); // not the handle's close(): the service did not ask for this

    const me = await apps.external.request('/api/v1/me', { headers: owner.headers });
    expect(me.status).toBe(503);
    expect(me.headers.get('Retry-After')).toMatch(/^\d+$/);
    expect((await errorOf(me)).code).toBe('unavailable');
    expect(database.guard.down).toBe(true);

    expect((await apps.external.request('/healthz')).status).toBe(200);
    expect((await apps.internal.request('/api/v1/servers', { headers: bearer('proxy') })).status).toBe(200);
    expect((await apps.internal.request('/readyz')).status).toBe(503);
    expect(deps.captured.lines().filter((l) => l.msg === 'unexpected error')).toEqual([]);
  });
});
