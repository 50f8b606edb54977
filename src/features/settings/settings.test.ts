import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, TOKENS, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { RawConnection, javaClientRequest } from '../../../test/helpers/raw-http.js';
import { addServer, addSystemServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { auditLog } from '../../db/schema/audit.js';
import { settings } from '../../db/schema/settings.js';
import { serve, type Listening } from '../../runtime/serve.js';

const ENTRY = '/api/v1/settings/entry-policy';
const WAKE = '/api/v1/settings/wake-policy';
const SOURCES = '/api/v1/settings/auth-sources';
const INTERNAL_ENTRY = '/api/v1/internal/settings/entry-policy';

const DEFAULT_POLICY = { mode: 'domain', defaultServer: '', requireAccountLink: true, offlineAction: 'wake', waitingSpace: 'lobby', fallbackServer: '' };

describe('settings: entry policy, wake policy, session sources', () => {
  const database = useTestDatabase();
  let deps: TestDeps;

  beforeEach(async () => {
    deps = createTestDeps(database());
    await deps.database.db.delete(settings).where(inArray(settings.key, ['player_entry_policy', 'wake_policy', 'auth_sources']));
  });

  const external = () => createTestApps(deps).external;
  const owner = async () => (await signIn(deps, { userId: (await createUser(deps, { role: 'owner' })).id })).headers;
  const get = async (path: string, headers: Record<string, string>) => {
    const res = await external().request(path, { headers });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const put = (path: string, headers: Record<string, string>, body: unknown) => external().request(path, jsonRequest('PUT', body, headers));

  it('guards every route: the tier matrix, the owner only (an admin is refused), the proxy and the limbo on the internal face', async () => {
    const { internal, external: ext } = createTestApps(deps);
    await expectTierMatrix(internal, [{ method: 'GET', path: INTERNAL_ENTRY, access: { tier: 'service', callers: ['proxy', 'limbo'] } }]);
    const admin = { tier: 'admin' } as const;
    await expectTierMatrix(ext, [
      { method: 'GET', path: ENTRY, access: admin },
      { method: 'PUT', path: ENTRY, access: admin },
      { method: 'GET', path: WAKE, access: admin },
      { method: 'PUT', path: WAKE, access: admin },
      { method: 'GET', path: SOURCES, access: admin },
      { method: 'PUT', path: SOURCES, access: admin },
      { method: 'POST', path: `${SOURCES}/test`, access: admin },
    ]);
    const staff = (await signIn(deps, { userId: (await createUser(deps, { role: 'admin' })).id })).headers;
    const player = (await signIn(deps, { userId: (await createUser(deps)).id, host: deps.config.consoleHost! })).headers;
    for (const headers of [staff, player]) {
      for (const path of [ENTRY, WAKE, SOURCES]) {
        const res = await ext.request(path, { headers });
        expect(res.status, path).toBe(403);
        expect((await errorOf(res)).code).toBe('forbidden');
      }
    }
    // The owner on the panel host is not on the admin tier's host.
    const onPanel = (await signIn(deps, { userId: (await createUser(deps, { role: 'owner' })).id, host: deps.config.panelHost! })).headers;
    expect([401, 403]).toContain((await ext.request(ENTRY, { headers: onPanel })).status);
  });

  it("entry policy: the original's default, a save with the revision read, 409 on a stale one, seen by the proxy and by another replica", async () => {
    const headers = await owner();
    const main = addServer(deps).spec.name;
    const before = await get(ENTRY, headers);
    expect(before).toEqual({ ...DEFAULT_POLICY, revision: '0' });
    const internal = createTestApps(deps).internal;
    expect(await (await internal.request(INTERNAL_ENTRY, { headers: bearer('limbo') })).json()).toEqual(before);

    const direct = { mode: 'direct', defaultServer: main, requireAccountLink: false, offlineAction: 'wake', waitingSpace: 'login', fallbackServer: '', revision: before.revision };
    const saved = await put(ENTRY, headers, direct);
    expect(saved.status).toBe(200);
    const view = (await saved.json()) as Record<string, unknown>;
    expect(view).toEqual({ ...direct, revision: '1' });
    const stale = await put(ENTRY, headers, direct);
    expect(stale.status).toBe(409);
    expect((await errorOf(stale)).code).toBe('conflict');

    // A second replica (its own deps on the same database) and the proxy see the saved policy.
    const replica = createTestDeps(database());
    expect(await (await createTestApps(replica).internal.request(INTERNAL_ENTRY, { headers: bearer('proxy') })).json()).toEqual(view);
    const audit = await deps.database.db.select().from(auditLog).where(inArray(auditLog.action, ['platform.entry_policy']));
    expect(audit.length).toBeGreaterThan(0);
  });

  it("entry policy: refuses each of the original's invalid policies (400), a missing target (404), unknown fields, and a save without a fresh proof", async () => {
    // An owner with a verified address has a way in to guard, so a save needs a proof from the last 5 minutes.
    const guarded = await createUser(deps, { role: 'owner', email: `o${randomMcUuid().slice(0, 6)}@example.com`, emailVerified: true });
    const headers = (await signIn(deps, { userId: guarded.id })).headers;
    const main = addServer(deps).spec.name;
    addSystemServer(deps, 'lobby');
    const good = { mode: 'direct', defaultServer: main, requireAccountLink: false, offlineAction: 'wake', waitingSpace: 'login', fallbackServer: '', revision: '0' };
    const bad: Array<Record<string, unknown>> = [
      { mode: 'invalid' },
      { defaultServer: '' },
      { defaultServer: 'lobby' },
      { defaultServer: 'Not A Name' },
      { offlineAction: 'fallback' },
      { offlineAction: 'fallback', fallbackServer: main },
      { waitingSpace: 'invalid' },
      { requireAccountLink: true },
      { requireAccountLink: 'yes' },
      { surprise: true },
      { revision: 3 },
    ];
    for (const change of bad) {
      const res = await put(ENTRY, headers, { ...good, ...change });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    const missing = await put(ENTRY, headers, { ...good, defaultServer: 'nosuchserver' });
    expect(missing.status).toBe(404);
    // A revision that is not ours is stale, never a 500.
    expect((await put(ENTRY, headers, { ...good, revision: 'abc' })).status).toBe(409);
    expect((await external().request(ENTRY, { method: 'PUT', headers: { ...headers, 'Content-Type': 'text/plain' }, body: '{}' })).status).toBe(415);
    // The sign-in's proof lasts 5 minutes; after it a save needs a fresh one.
    deps.clock.advance(6 * 60_000);
    const reauth = await put(ENTRY, headers, good);
    expect(reauth.status).toBe(403);
    expect((await errorOf(reauth)).code).toBe('reauth_required');
    expect((await get(ENTRY, headers)).revision).toBe('0');
  });

  it('entry policy: a stored policy that no longer parses fails closed (500, never the default)', async () => {
    const headers = await owner();
    await deps.database.db.insert(settings).values({ key: 'player_entry_policy', value: { mode: 'invalid' }, updatedAt: deps.clock.now(), revision: 4 });
    const res = await external().request(ENTRY, { headers });
    expect(res.status).toBe(500);
    expect((await createTestApps(deps).internal.request(INTERNAL_ENTRY, { headers: bearer('proxy') })).status).toBe(500);
  });

  it("answers the proxy's exact Java client request for the entry policy (EntryPolicy.fromJson reads it)", async () => {
    const server: Listening = await serve({ fetch: createTestApps(deps).internal.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    const conn = await RawConnection.open(server.port);
    try {
      await conn.write(javaClientRequest({ method: 'GET', path: INTERNAL_ENTRY, port: server.port, token: TOKENS.proxy }));
      const res = await conn.readResponse();
      expect(res.statusLine).toBe('HTTP/1.1 200 OK');
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(body).toMatchObject(DEFAULT_POLICY);
      expect(typeof body.requireAccountLink).toBe('boolean');
      await conn.write(javaClientRequest({ method: 'GET', path: INTERNAL_ENTRY, port: server.port, token: TOKENS.build }));
      const refused = await conn.readResponse();
      expect(refused.status).toBe(403);
    } finally {
      conn.close();
      await server.close(100);
    }
  });

  it('wake policy: the defaults unmanaged, a saved cap and cooldown read by every wake on every replica, 409 on a stale save, bounds', async () => {
    const headers = await owner();
    const before = await get(WAKE, headers);
    expect(before).toEqual({ maxRunningServers: 20, wakeCooldownSeconds: 30, revision: '0', managed: false });
    // One server runs; a cap of as many as run now leaves no room for another.
    const running = addServer(deps, { autostartPolicy: 'public', desiredState: 'Running' }).spec.name;
    const { running: count, nodes } = await deps.cluster.capacity();
    expect(count).toBeGreaterThanOrEqual(1);
    const cap = Math.ceil(count / nodes);
    const save = await put(WAKE, headers, { maxRunningServers: cap, wakeCooldownSeconds: 60, revision: '0' });
    expect(save.status).toBe(200);
    expect(await save.json()).toEqual({ maxRunningServers: cap, wakeCooldownSeconds: 60, revision: '1', managed: true });
    expect((await put(WAKE, headers, { maxRunningServers: 1, wakeCooldownSeconds: 60, revision: '0' })).status).toBe(409);

    // Another replica's wake meets the saved cap: at_capacity.
    const replica = createTestDeps(database(), { overrides: { cluster: deps.cluster, serverCache: deps.serverCache } });
    const wake = (d: TestDeps, name: string, mcUuid: string) =>
      createTestApps(d).internal.request(`/api/v1/internal/servers/${name}/wake`, jsonRequest('POST', { mc_uuid: mcUuid }, bearer('proxy')));
    const stopped = addServer(deps, { autostartPolicy: 'public' }).spec.name;
    expect(running).not.toBe(stopped);
    const full = await wake(replica, stopped, randomMcUuid());
    expect(full.status).toBe(503);
    expect((await errorOf(full)).code).toBe('at_capacity');
    // 0 is no cap (the original); the saved cooldown (60 s, not the default 30) holds the next wake on the other replica.
    expect((await put(WAKE, headers, { maxRunningServers: 0, wakeCooldownSeconds: 60, revision: '1' })).status).toBe(200);
    expect((await wake(replica, stopped, randomMcUuid())).status).toBe(202);
    deps.clock.advance(45_000);
    const cooling = await wake(deps, stopped, randomMcUuid());
    expect(cooling.status).toBe(429);
    expect(cooling.headers.get('retry-after')).toBe('15');
    for (const body of [{ maxRunningServers: -1, wakeCooldownSeconds: 0, revision: '2' }, { maxRunningServers: 0, wakeCooldownSeconds: 3601, revision: '2' }, { maxRunningServers: 1.5, wakeCooldownSeconds: 0, revision: '2' }, { maxRunningServers: 1, revision: '2' }, { maxRunningServers: 1, wakeCooldownSeconds: 1, revision: '2', managed: true }]) {
      const res = await put(WAKE, headers, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('settings: session sources', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let probe: Listening;
  let lastServerIds: string[];
  let answer = 204;

  beforeAll(async () => {
    lastServerIds = [];
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      lastServerIds.push(url.searchParams.get('serverId') ?? '');
      if (url.searchParams.get('username') !== 'FelisProbe') res.statusCode = 400;
      else res.statusCode = url.pathname === '/big' ? 200 : answer;
      if (answer === 302) res.setHeader('Location', 'http://127.0.0.1:1/nowhere');
      res.end(url.pathname === '/big' ? 'x'.repeat(200_000) : '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    probe = { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) } as unknown as Listening;
  });
  afterAll(async () => {
    await probe?.close(0);
  });

  beforeEach(async () => {
    deps = createTestDeps(database(), {
      env: {
        SESSION_SOURCES: JSON.stringify([
          { name: 'mojang', url: 'http://127.0.0.1:9/primary', primary: true },
          { name: 'littleskin', url: 'https://littleskin.example/api/yggdrasil/sessionserver', prefix: 'LS' },
        ]),
      },
    });
    await deps.database.db.delete(settings).where(inArray(settings.key, ['auth_sources']));
  });

  const external = () => createTestApps(deps).external;
  const owner = async () => (await signIn(deps, { userId: (await createUser(deps, { role: 'owner' })).id })).headers;
  const read = async (headers: Record<string, string>) => {
    const res = await external().request(SOURCES, { headers });
    expect(res.status).toBe(200);
    return (await res.json()) as { sources: Array<Record<string, unknown>>; revision: string; managed: boolean };
  };
  const save = (headers: Record<string, string>, body: unknown) => external().request(SOURCES, jsonRequest('PUT', body, headers));

  it('seeds the list from SESSION_SOURCES (unmanaged), saves an ordered list (managed), keeps tags, and refuses a stale revision', async () => {
    const headers = await owner();
    const before = await read(headers);
    expect(before).toEqual({
      sources: [{ tag: 'littleskin', prefix: 'LS', url: 'https://littleskin.example/api/yggdrasil/sessionserver/session/minecraft/hasJoined', api_url: '', enabled: true }],
      revision: '0',
      managed: false,
    });
    const other = { tag: 'other', prefix: 'OT', url: 'https://other.example/session/minecraft/hasJoined', api_url: 'https://other.example', enabled: true };
    const res = await save(headers, { sources: [other, { ...before.sources[0], enabled: false }], revision: '0' });
    expect(res.status).toBe(200);
    const saved = (await res.json()) as { sources: Array<Record<string, unknown>>; revision: string; managed: boolean };
    expect(saved).toMatchObject({ revision: '1', managed: true });
    expect(saved.sources.map((s) => s.tag)).toEqual(['other', 'littleskin']);
    const stale = await save(headers, { sources: saved.sources, revision: '0' });
    expect(stale.status).toBe(409);
    expect((await errorOf(stale)).code).toBe('auth_sources_changed');
    for (const sources of [[other], [{ ...other }, { ...before.sources[0], tag: 'renamed', prefix: 'RN' }]]) {
      const locked = await save(headers, { sources, revision: '1' });
      expect(locked.status).toBe(409);
      expect((await errorOf(locked)).code).toBe('auth_source_tag_locked');
    }
  });

  it('refuses a source whose tag, prefix or URL breaks the rules, and an unknown field (400), without storing anything', async () => {
    const headers = await owner();
    const valid = { tag: 'custom', prefix: 'CS', url: 'https://example.test/check', enabled: true };
    const cases: unknown[][] = [
      [{ ...valid, tag: 'MOJANG' }],
      [{ ...valid, tag: '' }],
      [{ ...valid, tag: 'x:y' }],
      [valid, valid],
      [valid, { ...valid, tag: 'other', prefix: 'cs' }],
      [{ ...valid, prefix: 'ABCDEFGHI' }],
      [{ ...valid, url: 'http://example.test/check' }],
      [{ ...valid, url: 'ftp://example.test/check' }],
      [{ ...valid, url: 'https://user:pass@example.test/check' }],
      [{ ...valid, url: `${valid.url}?secret=1` }],
      [{ ...valid, url: `${valid.url}#fragment` }],
      [{ ...valid, url: 'not a url' }],
      [{ ...valid, api_url: 'javascript:alert(1)' }],
      [{ ...valid, identity: true }],
    ];
    for (const sources of cases) {
      const res = await save(headers, { sources: [{ tag: 'littleskin', prefix: 'LS', url: 'https://littleskin.example/x', enabled: true }, ...sources], revision: '0' });
      expect(res.status, JSON.stringify(sources)).toBe(400);
    }
    expect((await read(headers)).managed).toBe(false);
  });

  it('the verifier asks the saved sources without a restart: on this replica at once, on another within its refresh', async () => {
    const { SessionStandIn } = await import('../../../test/helpers/session-stand-in.js');
    const { createSessionVerifier } = await import('../verifier/index.js');
    const primary = await SessionStandIn.start();
    const third = await SessionStandIn.start();
    try {
      const env = { SESSION_SOURCES: JSON.stringify([{ name: 'mojang', url: primary.url, primary: true }]) };
      const a = createTestDeps(database(), { env });
      const b = createTestDeps(database(), { env });
      a.sessionVerifier = createSessionVerifier(a);
      b.sessionVerifier = createSessionVerifier(b);
      primary.behaviour = { kind: 'no-content' };
      third.behaviour = { kind: 'profile', body: { id: '123456781234423482341234567890ab', name: 'LemonMiaow', properties: [] } };
      const hasJoined = (d: TestDeps) => createTestApps(d).internal.request('/session/minecraft/hasJoined?username=LemonMiaow&serverId=abc');
      expect((await hasJoined(a)).status).toBe(204);
      expect((await hasJoined(b)).status).toBe(204);
      const headers = (await signIn(a, { userId: (await createUser(a, { role: 'owner' })).id })).headers;
      const res = await createTestApps(a).external.request(SOURCES, jsonRequest('PUT', { sources: [{ tag: 'third', prefix: 'TP', url: `${third.url}/session/minecraft/hasJoined`, enabled: true }], revision: '0' }, headers));
      expect(res.status).toBe(200);
      // This replica at once; the other one still has its list until its refresh interval passes.
      expect((await hasJoined(a)).status).toBe(200);
      const asked = third.requests.length;
      expect((await hasJoined(b)).status).toBe(204);
      expect(third.requests.length).toBe(asked);
      b.clock.advance(5_000);
      const admitted = await hasJoined(b);
      expect(admitted.status).toBe(200);
      expect(((await admitted.json()) as { name: string }).name).toMatch(/LemonMiaow$/);
      a.sessionVerifier.close();
      b.sessionVerifier.close();
    } finally {
      await primary.close();
      await third.close();
    }
  });

  it('tests one source: {ok, status, elapsed_ms} with a fresh serverId each time, no redirect followed, 503 when unreachable', async () => {
    const headers = await owner();
    const test = (url: string) => external().request(`${SOURCES}/test`, jsonRequest('POST', { tag: 'probe', prefix: 'P', url, enabled: true }, headers));
    for (const status of [204, 200, 302, 503]) {
      answer = status;
      lastServerIds = [];
      for (let i = 0; i < 2; i++) {
        const res = await test(`http://127.0.0.1:${probe.port}/session/minecraft/hasJoined`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as { ok: boolean; status: number; elapsed_ms: number };
        expect(body).toEqual({ ok: status === 204, status, elapsed_ms: expect.any(Number) });
        expect(body.elapsed_ms).toBeGreaterThanOrEqual(0);
      }
      expect(lastServerIds).toHaveLength(2);
      expect(lastServerIds[0]).not.toBe(lastServerIds[1]);
    }
    answer = 204;
    const tooBig = await test(`http://127.0.0.1:${probe.port}/big`);
    expect(tooBig.status).toBe(503);
    const unreachable = await test('http://127.0.0.1:1/check');
    expect(unreachable.status).toBe(503);
    expect((await errorOf(unreachable)).code).toBe('auth_source_unavailable');
    for (const url of ['https://user:secret@example.test/check', 'file:///etc/passwd', 'http://example.test/check', 'https://example.test/check?x=1']) {
      expect((await test(url)).status, url).toBe(400);
    }
    expect(await deps.database.db.select().from(settings).where(inArray(settings.key, ['auth_sources']))).toEqual([]);
  });
});
