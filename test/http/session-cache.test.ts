import { eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { apiKeys, sessions } from '../../src/db/schema/accounts.js';
import { createTestApps, createTestDeps, jsonRequest, type TestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { createUser, signIn } from '../helpers/sessions.js';

/**
 * The session check's cache (src/features/accounts/authenticator.ts), on one replica and on two:
 * two services (each its own deps, authenticator and cache) on one shared database, as two
 * replicas on one PostgreSQL (TEST_DATABASE_URL) or, on PGlite, two services on one database.
 */
describe('the session check cache and revocation', () => {
  const database = useTestDatabase();
  const own: DatabaseHandle[] = [];
  afterAll(() => Promise.all(own.map((handle) => handle.close())));
  /** One service; `ownPool`: on PostgreSQL, with a connection pool of its own, as another process. */
  const replica = (ownPool = false, env: Record<string, string> = {}): { deps: TestDeps; apps: ReturnType<typeof createTestApps> } => {
    const shared = database();
    let handle = shared;
    if (ownPool && shared.source.kind === 'postgres') own.push((handle = openPostgres(shared.source.url)));
    const deps = createTestDeps(handle, { env: { SESSION_CACHE_MS: '1000', ...env } });
    return { deps, apps: createTestApps(deps) };
  };
  const me = async (r: ReturnType<typeof replica>, headers: Record<string, string>) => (await r.apps.external.request('/api/v1/me', { headers })).status;
  /** `me` with every statement refused (503) meanwhile: a 200 asked the database nothing. */
  const meWithNoQuery = async (r: ReturnType<typeof replica>, headers: Record<string, string>) => {
    database().guard.hold('no statement may run');
    try {
      return await me(r, headers);
    } finally {
      database().guard.release();
    }
  };

  /** The status `me` gives on replica `r` once it changed to `want`, and how long that took (ms). */
  async function until(r: ReturnType<typeof replica>, headers: Record<string, string>, want: number): Promise<number> {
    const started = performance.now();
    while ((await me(r, headers)) !== want) {
      if (performance.now() - started > 5_000) throw new Error(`still not ${want} after 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return performance.now() - started;
  }

  /**
   * On PostgreSQL, waits until the replica's change feed has heard back its own ping of the last
   * 300 ms (the cache is used only then); the in-process PGlite has no feed.
   */
  async function feedFresh(r: ReturnType<typeof replica>): Promise<void> {
    const feed = r.deps.database.changeFeed?.();
    const started = performance.now();
    while (feed && performance.now() - feed.seenThrough() > 300) {
      if (performance.now() - started > 10_000) throw new Error('the change feed did not become fresh');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('answers a signed-in read with no query; a change written behind its back shows within a second', async () => {
    const a = replica();
    const user = await createUser(a.deps);
    const session = await signIn(a.deps, { userId: user.id });
    await feedFresh(a);
    expect(await me(a, session.headers)).toBe(200);
    expect(await meWithNoQuery(a, session.headers)).toBe(200);
    // Written straight into the database, as another replica (or a command) would.
    await database().db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.tokenHash, session.tokenHash));
    const tookMs = await until(a, session.headers, 401);
    expect(tookMs).toBeLessThanOrEqual(1_500); // the bound is SESSION_CACHE_MS (1 s); polling adds a little
  });

  it('one replica: a sign-out and a revoke take effect on the next request', async () => {
    const a = replica();
    const user = await createUser(a.deps);
    const first = await signIn(a.deps, { userId: user.id });
    const second = await signIn(a.deps, { userId: user.id });
    expect(await me(a, first.headers)).toBe(200);
    expect(await me(a, second.headers)).toBe(200);

    const out = await a.apps.external.request('/api/v1/auth/logout', { method: 'POST', headers: first.headers });
    expect(out.status).toBeLessThan(300);
    expect(await me(a, first.headers)).toBe(401);

    const revoke = await a.apps.external.request(`/api/v1/account/sessions/${second.tokenHash}`, { method: 'DELETE', headers: second.headers });
    expect(revoke.status).toBeLessThan(300);
    expect(await me(a, second.headers)).toBe(401);
  });

  it('two replicas: a disable and a role change made on one count at once there and within a second on the other', async () => {
    const a = replica();
    const b = replica(true);
    const owner = await signIn(a.deps, { userId: (await createUser(a.deps, { role: 'owner' })).id });
    const player = await createUser(a.deps);
    const playerSession = await signIn(a.deps, { userId: player.id });
    const admin = await createUser(a.deps, { role: 'admin' });
    const adminSession = await signIn(a.deps, { userId: admin.id });
    for (const r of [a, b]) {
      expect(await me(r, playerSession.headers)).toBe(200);
      expect((await r.apps.external.request('/api/v1/users', { headers: adminSession.headers })).status).toBe(200);
    }

    const disabled = await a.apps.external.request(`/api/v1/users/${player.id}/disable`, jsonRequest('POST', { disabled: true }, owner.headers));
    expect(disabled.status).toBe(200);
    expect(await me(a, playerSession.headers)).toBe(401);
    expect(await until(b, playerSession.headers, 401)).toBeLessThanOrEqual(1_500);

    const demoted = await a.apps.external.request(`/api/v1/users/${admin.id}`, jsonRequest('PATCH', { role: 'user' }, owner.headers));
    expect(demoted.status).toBe(200);
    const staffList = async (r: ReturnType<typeof replica>) => (await r.apps.external.request('/api/v1/users', { headers: adminSession.headers })).status;
    expect(await staffList(a)).not.toBe(200);
    const started = performance.now();
    while ((await staffList(b)) === 200) {
      if (performance.now() - started > 5_000) throw new Error('the role change did not reach the other replica');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(performance.now() - started).toBeLessThanOrEqual(1_500);
  });

  it('staff idle time stays exact: a cached check is read again once last_seen_at is a minute old', async () => {
    const a = replica();
    const staff = await signIn(a.deps, { userId: (await createUser(a.deps, { role: 'admin' })).id });
    expect(await me(a, staff.headers)).toBe(200);
    // 31 minutes without a request: idle. The cached row (read a moment ago) must not hide it.
    a.deps.clock.advance(31 * 60 * 1000);
    expect(await me(a, staff.headers)).toBe(401);
  });

  it('last_seen_at is written at most once a minute, from the cache as without it', async () => {
    const a = replica();
    const user = await createUser(a.deps);
    const session = await signIn(a.deps, { userId: user.id });
    const lastSeen = async () =>
      (await database().db.select({ at: sessions.lastSeenAt }).from(sessions).where(eq(sessions.tokenHash, session.tokenHash)))[0]!.at.getTime();
    const minted = await lastSeen();
    a.deps.clock.advance(30_000);
    expect(await me(a, session.headers)).toBe(200);
    expect(await lastSeen()).toBe(minted);
    a.deps.clock.advance(31_000);
    expect(await me(a, session.headers)).toBe(200);
    expect(await lastSeen()).toBe(a.deps.clock.now().getTime());
    expect(await me(a, session.headers)).toBe(200);
    expect(await lastSeen()).toBe(a.deps.clock.now().getTime());
  });

  describe('API keys (issue 42), cached as sessions are', () => {
    /** A user of replica `r` and a full key of its own, made through the route (a passkey sign-in is a fresh proof). */
    async function keyOn(r: ReturnType<typeof replica>) {
      const user = await createUser(r.deps);
      const session = await signIn(r.deps, { userId: user.id });
      const res = await r.apps.external.request('/api/v1/account/api-keys', jsonRequest('POST', { name: 'bot' }, session.headers));
      expect(res.status).toBe(201);
      const key = (await res.json()) as { id: string; secret: string };
      return { user, session, key, headers: { Authorization: `Bearer ${key.secret}`, Host: r.deps.config.panelHost! } };
    }

    it('a hot read with a key asks the database nothing once its replica holds a slice of the key\'s minute', async () => {
      const a = replica();
      const { headers } = await keyOn(a);
      await feedFresh(a);
      // Slices of the minute are claimed 1, 2, 4, …: after four requests this replica holds three more.
      for (let i = 0; i < 4; i++) expect(await me(a, headers)).toBe(200);
      expect(await meWithNoQuery(a, headers)).toBe(200);
    });

    it('two replicas: a key revoked on one is refused at once there and within a second on the other', async () => {
      const a = replica();
      const b = replica(true);
      const { session, key, headers } = await keyOn(a);
      await Promise.all([feedFresh(a), feedFresh(b)]);
      for (const r of [a, b]) for (let i = 0; i < 4; i++) expect(await me(r, headers)).toBe(200);
      expect((await a.apps.external.request(`/api/v1/account/api-keys/${key.id}`, { method: 'DELETE', headers: session.headers })).status).toBe(204);
      expect(await me(a, headers)).toBe(401);
      expect(await until(b, headers, 401)).toBeLessThanOrEqual(1_500);
    });

    it('two replicas share the per-key limit through the database: exactly the limit is admitted in a minute', async () => {
      const limit = { API_KEY_REQUESTS_PER_MINUTE: '10' };
      const a = replica(false, limit);
      const b = replica(true, limit);
      const { headers } = await keyOn(a);
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push(await me(i % 2 === 0 ? a : b, headers));
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      // The next minute (both replicas' clocks), the key is served again.
      for (const r of [a, b]) r.deps.clock.advance(60_000);
      expect(await me(b, headers)).toBe(200);
    });

    it('last_used_at is written at most once a minute, from the cache as without it', async () => {
      const a = replica();
      const { key, headers } = await keyOn(a);
      const lastUsed = async () => (await database().db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, key.id)))[0]!.at?.getTime();
      expect(await me(a, headers)).toBe(200);
      const first = a.deps.clock.now().getTime();
      expect(await lastUsed()).toBe(first);
      a.deps.clock.advance(30_000);
      expect(await me(a, headers)).toBe(200);
      expect(await lastUsed()).toBe(first);
      a.deps.clock.advance(31_000);
      expect(await me(a, headers)).toBe(200);
      expect(await lastUsed()).toBe(a.deps.clock.now().getTime());
    });
  });

  describe.runIf(process.env.TEST_DATABASE_URL)('on PostgreSQL, through LISTEN/NOTIFY', () => {
    const writeElsewhere = () => {
      // Another process's pool: its commit reaches this replica only through the feed.
      const other = openPostgres((database().source as { url: string }).url);
      own.push(other);
      return other.db;
    };

    it('keeps answering from the cache past the bound while the feed is fresh, and a change elsewhere counts at once', async () => {
      const a = replica();
      const user = await createUser(a.deps);
      const session = await signIn(a.deps, { userId: user.id });
      await feedFresh(a);
      expect(await me(a, session.headers)).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_300)); // past SESSION_CACHE_MS
      expect(await meWithNoQuery(a, session.headers)).toBe(200);
      await writeElsewhere().update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.tokenHash, session.tokenHash));
      expect(await until(a, session.headers, 401)).toBeLessThanOrEqual(1_500);
    });

    it('a lost listening connection: a change made while it was gone still counts within the bound, then the feed listens again', async () => {
      const a = replica();
      const user = await createUser(a.deps);
      const session = await signIn(a.deps, { userId: user.id });
      await feedFresh(a);
      expect(await me(a, session.headers)).toBe(200);
      const elsewhere = writeElsewhere();
      // The listening connection dies (as a restarted database or a cut network would end it).
      const ended = await elsewhere.execute(
        sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'felis-changes' and datname = current_database()`,
      );
      expect((ended as unknown as unknown[]).length).toBeGreaterThanOrEqual(1);
      await elsewhere.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.tokenHash, session.tokenHash));
      expect(await until(a, session.headers, 401)).toBeLessThanOrEqual(1_500);

      // Listening again: a new session is answered from the cache once more.
      const next = await signIn(a.deps, { userId: user.id });
      await feedFresh(a);
      expect(await me(a, next.headers)).toBe(200);
      expect(await meWithNoQuery(a, next.headers)).toBe(200);
    });
  });
});
