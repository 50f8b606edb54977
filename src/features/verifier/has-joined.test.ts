import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { barredPlayers } from '../../db/schema/index.js';
import { bearer, createTestApps, createTestDeps, errorOf, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { SessionStandIn, type Behaviour } from '../../../test/helpers/session-stand-in.js';
import type { DatabaseHandle } from '../../db/client.js';
import { BAR_FRESH_MS, BAR_MAX_STALE_MS } from './bar-list.js';
import { FAILED_TTL_MS, FREE_TTL_MS, TAKEN_TTL_MS } from './name-registry.js';
import type { SessionVerifier } from './service.js';

const NOTCH_ID = '069a79f444e94726a5befca90e38aaf5';
const JEB_ID = '61699b2ed3274a019f1e0ea8c3f06bc6';
/** thirdPartyUuid('elyby', NOTCH_ID) and ('backup', …), computed with Python's uuid.uuid3 (see uuid.test.ts). */
const NOTCH_AT_ELYBY = '72940132c16d30c6b7d90f6089ad729f';
const JEB_AT_ELYBY = 'a3950ddf33f830e389a7d3d6cf18841b';
const NOTCH_AT_BACKUP = 'd5ff6ce850943a4ba40b2ec52e151584';

const TEXTURES = [
  {
    name: 'textures',
    value: 'ewogICJ0aW1lc3RhbXAiIDogMTcwMDAwMDAwMDAwMCwKICAicHJvZmlsZUlkIiA6ICIwNjlhNzlmNCIKfQ==',
    signature: 'c2lnbmF0dXJlLWJ5dGVzLXVuY2hhbmdlZA+/==',
  },
];

const profile = (id: string, name: string, properties: unknown = TEXTURES): Behaviour => ({
  kind: 'profile',
  body: { id, name, properties, profileActions: [] },
});
const noContent: Behaviour = { kind: 'no-content' };

describe('GET /session/minecraft/hasJoined', () => {
  const database = useTestDatabase();
  const standIns: SessionStandIn[] = [];
  const verifiers: SessionVerifier[] = [];

  afterEach(() => {
    for (const v of verifiers.splice(0)) v.close();
  });
  afterAll(async () => {
    await Promise.all(standIns.map((s) => s.close()));
  });

  async function standIn(behaviour: Behaviour = noContent): Promise<SessionStandIn> {
    const s = await SessionStandIn.start();
    s.behaviour = behaviour;
    standIns.push(s);
    return s;
  }

  interface SourceSpec {
    name: string;
    at: SessionStandIn | string;
    primary?: boolean;
    prefix?: string;
    profileAt?: SessionStandIn;
  }

  function setup(sources: SourceSpec[], options: { timeoutMs?: number; db?: DatabaseHandle } = {}) {
    const env = {
      SESSION_SOURCES: JSON.stringify(
        sources.map((s) => ({
          name: s.name,
          url: typeof s.at === 'string' ? s.at : s.at.url,
          ...(s.primary ? { primary: true } : {}),
          ...(s.prefix ? { prefix: s.prefix } : {}),
          ...(s.profileAt ? { profile_url: s.profileAt.url } : {}),
        })),
      ),
      SESSION_SOURCE_TIMEOUT_MS: String(options.timeoutMs ?? 10_000),
    };
    const deps: TestDeps = createTestDeps(options.db ?? database(), { env });
    verifiers.push(deps.sessionVerifier);
    const { internal, external } = createTestApps(deps);
    return { deps, internal, external };
  }

  /** The usual pair: the primary (its own profile API) and elyby with prefix ELY. */
  async function pair(primaryBehaviour: Behaviour, elybyBehaviour: Behaviour, options: { timeoutMs?: number } = {}) {
    const primary = await standIn(primaryBehaviour);
    const elyby = await standIn(elybyBehaviour);
    const app = setup(
      [
        { name: 'mojang', at: primary, primary: true, profileAt: primary },
        { name: 'elyby', at: elyby, prefix: 'ELY' },
      ],
      options,
    );
    return { primary, elyby, ...app };
  }

  const path = (params: Record<string, string>) =>
    `/session/minecraft/hasJoined?${new URLSearchParams(params).toString()}`;
  const login = { username: 'Notch', serverId: '-4fc5b4a5b3c2a9c1e8b2a0f7d6e5c4b3a2f1e0d9', ip: '203.0.113.7' };

  describe('a source validates', () => {
    it('answers the primary profile undashed with its properties unchanged, without a token', async () => {
      const { primary, internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      const res = await internal.request(path(login));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ id: NOTCH_ID, name: 'Notch', properties: TEXTURES });
      const asked = primary.hasJoinedRequests()[0]!;
      expect(Object.fromEntries(asked.query)).toEqual(login);
      expect(asked.headers.accept).toBe('application/json');
      expect(primary.profileRequests()).toHaveLength(0);
    });

    it('undashes and lowercases a dashed upper-case primary id', async () => {
      const { internal } = await pair(profile('069A79F4-44E9-4726-A5BE-FCA90E38AAF5', 'Notch'), noContent);
      expect(((await (await internal.request(path(login))).json()) as { id: string }).id).toBe(NOTCH_ID);
    });

    it('answers an empty properties list when the source sends none', async () => {
      const { internal } = await pair({ kind: 'profile', body: { id: NOTCH_ID, name: 'Notch' } }, noContent);
      expect(await (await internal.request(path(login))).json()).toEqual({ id: NOTCH_ID, name: 'Notch', properties: [] });
    });

    it("rewrites a secondary source's UUID into its namespace and keeps a name free at the primary", async () => {
      const { primary, elyby, internal } = await pair(noContent, profile(JEB_ID, 'jeb_'));
      const res = await internal.request(path({ username: 'jeb_', serverId: 'abc' }));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ id: JEB_AT_ELYBY, name: 'jeb_', properties: TEXTURES });
      expect(elyby.hasJoinedRequests()).toHaveLength(1);
      expect(primary.profileRequests().map((r) => r.path)).toEqual(['/users/profiles/minecraft/jeb_']);
    });

    it('namespaces per source: the same source UUID gives each source its own player', async () => {
      const primary = await standIn(noContent);
      const elyby = await standIn(noContent);
      const backup = await standIn(profile(NOTCH_ID, 'Notch'));
      const { internal } = setup([
        { name: 'mojang', at: primary, primary: true, profileAt: primary },
        { name: 'elyby', at: elyby },
        { name: 'backup', at: backup, prefix: 'BK' },
      ]);
      const viaBackup = (await (await internal.request(path(login))).json()) as { id: string };
      expect(viaBackup.id).toBe(NOTCH_AT_BACKUP);
      elyby.behaviour = profile(NOTCH_ID, 'Notch');
      const viaElyby = (await (await internal.request(path(login))).json()) as { id: string };
      expect(viaElyby.id).toBe(NOTCH_AT_ELYBY);
    });

    it('prefixes a third-party name registered at the primary and cuts it to 16 characters', async () => {
      const { primary, internal } = await pair(noContent, profile(NOTCH_ID, 'Notch'));
      primary.takenNames.add('notch');
      expect(await (await internal.request(path(login))).json()).toMatchObject({ id: NOTCH_AT_ELYBY, name: 'ELY_Notch' });

      const long = await pair(noContent, profile(NOTCH_ID, 'LongPlayerName_1'));
      long.primary.takenNames.add('LongPlayerName_1');
      const body = (await (await long.internal.request(path({ username: 'LongPlayerName_1', serverId: 'x' }))).json()) as {
        name: string;
      };
      expect(body.name).toBe('ELY_LongPlayerNa');
      expect(body.name).toHaveLength(16);
    });

    it("prefixes with the source's name when it has no configured prefix", async () => {
      const primary = await standIn(noContent);
      primary.takenNames.add('Notch');
      const other = await standIn(profile(NOTCH_ID, 'Notch'));
      const { internal } = setup([
        { name: 'mojang', at: primary, primary: true, profileAt: primary },
        { name: 'ely-by_mirror', at: other },
      ]);
      expect(((await (await internal.request(path(login))).json()) as { name: string }).name).toBe('elybymir_Notch');
    });

    it('counts a failed name lookup as taken, and a primary without a lookup root as taken', async () => {
      const { primary, internal } = await pair(noContent, profile(NOTCH_ID, 'Notch'));
      primary.profileBehaviour = { kind: 'status', status: 503 };
      expect(((await (await internal.request(path(login))).json()) as { name: string }).name).toBe('ELY_Notch');

      const bare = await standIn(noContent);
      const third = await standIn(profile(NOTCH_ID, 'Notch'));
      const { internal: noRoot } = setup([
        { name: 'mojang', at: bare, primary: true },
        { name: 'elyby', at: third, prefix: 'ELY' },
      ]);
      expect(((await (await noRoot.request(path(login))).json()) as { name: string }).name).toBe('ELY_Notch');
      expect(bare.profileRequests()).toHaveLength(0);
    });

    it('caches a taken name 24 h, a free one 10 min and a failure 1 min (by the injected clock)', async () => {
      const { primary, internal, deps } = await pair(noContent, profile(NOTCH_ID, 'Notch'));
      const nameOf = async () => ((await (await internal.request(path(login))).json()) as { name: string }).name;
      primary.takenNames.add('Notch');
      expect(await nameOf()).toBe('ELY_Notch');
      primary.takenNames.clear();
      deps.clock.advance(TAKEN_TTL_MS - 1000);
      expect(await nameOf()).toBe('ELY_Notch');
      expect(primary.profileRequests()).toHaveLength(1);
      deps.clock.advance(1000);
      expect(await nameOf()).toBe('Notch');
      expect(primary.profileRequests()).toHaveLength(2);

      primary.takenNames.add('Notch');
      deps.clock.advance(FREE_TTL_MS - 1000);
      expect(await nameOf()).toBe('Notch');
      deps.clock.advance(1000);
      expect(await nameOf()).toBe('ELY_Notch');
      expect(primary.profileRequests()).toHaveLength(3);

      deps.clock.advance(TAKEN_TTL_MS);
      primary.takenNames.clear();
      primary.profileBehaviour = { kind: 'status', status: 500 };
      expect(await nameOf()).toBe('ELY_Notch');
      primary.profileBehaviour = undefined;
      deps.clock.advance(FAILED_TTL_MS);
      expect(await nameOf()).toBe('Notch');
      expect(primary.profileRequests()).toHaveLength(5);
    });

    it('answers a lower source when a higher one failed', async () => {
      const { internal } = await pair({ kind: 'status', status: 500 }, profile(NOTCH_ID, 'Notch'));
      const res = await internal.request(path(login));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(NOTCH_AT_ELYBY);
    });

    it('serves the proxy Java client exactly as it sends (Content-Length: 0, h2c offer, bearer)', async () => {
      const { internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      const res = await internal.request(path(login), {
        headers: {
          'Content-Length': '0',
          Connection: 'Upgrade, HTTP2-Settings',
          Upgrade: 'h2c',
          'HTTP2-Settings': 'AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA',
          Accept: 'application/json',
          ...bearer('proxy'),
        },
      });
      expect(res.status).toBe(200);
    });

    it('ignores unknown query parameters and accepts exactly 64 bytes', async () => {
      const { primary, internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      const serverId = 'é'.repeat(32); // 64 bytes in UTF-8
      const res = await internal.request(path({ ...login, serverId, unsafe: 'true', extra: 'x'.repeat(200) }));
      expect(res.status).toBe(200);
      expect(primary.hasJoinedRequests()[0]!.query.get('serverId')).toBe(serverId);
      expect(primary.hasJoinedRequests()[0]!.query.has('extra')).toBe(false);
    });
  });

  describe('not admitted (204, no body)', () => {
    it('when no source validated', async () => {
      const { primary, elyby, internal } = await pair(noContent, noContent);
      const res = await internal.request(path(login));
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect(primary.hasJoinedRequests()).toHaveLength(1);
      expect(elyby.hasJoinedRequests()).toHaveLength(1);
    });

    it.each([
      ['username missing', { serverId: 'abc' }],
      ['serverId missing', { username: 'Notch' }],
      ['username empty', { username: '', serverId: 'abc' }],
      ['username over 64 bytes', { username: 'é'.repeat(32) + 'a', serverId: 'abc' }],
      ['serverId over 64 bytes', { username: 'Notch', serverId: 'a'.repeat(65) }],
      ['ip over 64 bytes', { username: 'Notch', serverId: 'abc', ip: '1'.repeat(65) }],
    ])('without asking any source when %s', async (_, params) => {
      const { primary, elyby, internal } = await pair(profile(NOTCH_ID, 'Notch'), profile(NOTCH_ID, 'Notch'));
      const res = await internal.request(path(params));
      expect(res.status).toBe(204);
      expect(await res.text()).toBe('');
      expect(primary.requests).toHaveLength(0);
      expect(elyby.requests).toHaveLength(0);
    });

    it.each([
      ['broken percent-encoding', 'username=%E0%A4%A&serverId=abc'],
      ['a lone percent sign', 'username=%&serverId=%zz'],
      ['an encoded NUL', 'username=No%00tch&serverId=abc'],
    ])('never answers 500 to %s', async (_, query) => {
      const { internal } = await pair(noContent, noContent);
      const res = await internal.request(`/session/minecraft/hasJoined?${query}`);
      expect(res.status).toBe(204);
    });

    it('without asking any source when a parameter is repeated', async () => {
      const { primary, internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      const res = await internal.request('/session/minecraft/hasJoined?username=Notch&username=jeb_&serverId=abc');
      expect(res.status).toBe(204);
      expect(primary.requests).toHaveLength(0);
    });

    it('when the primary returned an unparseable id, even if a lower source validates', async () => {
      const { internal } = await pair(profile('not-a-uuid', 'Notch'), profile(NOTCH_ID, 'Notch'));
      expect((await internal.request(path(login))).status).toBe(204);
    });

    it.each(['ab', 'bad-name', 'x'.repeat(17), 'Nötch'])('when a third-party name %j is not a legal game name', async (name) => {
      const primary = await standIn(noContent);
      const elyby = await standIn(profile(NOTCH_ID, name));
      const backup = await standIn(profile(JEB_ID, 'jeb_'));
      const { internal } = setup([
        { name: 'mojang', at: primary, primary: true, profileAt: primary },
        { name: 'elyby', at: elyby },
        { name: 'backup', at: backup },
      ]);
      expect((await internal.request(path(login))).status).toBe(204);
      expect(primary.profileRequests()).toHaveLength(0);
    });

    it('when the canonical UUID is barred: the primary id, or the namespaced one (never the source id)', async () => {
      const { db } = database();
      const now = new Date('2026-06-01T12:00:00Z');
      const hold = new Date('2026-07-01T12:00:00Z');
      await db.insert(barredPlayers).values([
        { mcUuid: '069a79f4-44e9-4726-a5be-fca90e38aaf5', username: 'Notch', barredAt: now, holdExpiresAt: hold },
        { mcUuid: 'a3950ddf-33f8-30e3-89a7-d3d6cf18841b', username: 'jeb_', barredAt: now, holdExpiresAt: hold, dataRef: 'x' },
      ]);
      try {
        const primaryBarred = await pair(profile(NOTCH_ID, 'Notch'), noContent);
        expect((await primaryBarred.internal.request(path(login))).status).toBe(204);

        const thirdBarred = await pair(noContent, profile(JEB_ID, 'jeb_'));
        expect((await thirdBarred.internal.request(path(login))).status).toBe(204);

        // The barred primary id, validated by a third party, is another (namespaced) player.
        const sameIdElsewhere = await pair(noContent, profile(NOTCH_ID, 'Notch'));
        expect((await sameIdElsewhere.internal.request(path(login))).status).toBe(200);
      } finally {
        await db.delete(barredPlayers);
      }
    });
  });

  describe('bar list snapshot', () => {
    const NOTCH_DASHED = '069a79f4-44e9-4726-a5be-fca90e38aaf5';
    const bar = (db: DatabaseHandle['db']) =>
      db.insert(barredPlayers).values({
        mcUuid: NOTCH_DASHED,
        username: 'Notch',
        barredAt: new Date('2026-06-01T12:00:00Z'),
        holdExpiresAt: new Date('2026-07-01T12:00:00Z'),
      });

    /** The real database, whose reads fail while `broken` is set. */
    function switchable() {
      const real = database();
      const state = { broken: false };
      const db = new Proxy(real.db, {
        get(target, prop, receiver) {
          if (prop === 'select' && state.broken) {
            // Every read fails, whether awaited at `.from()` (the bar list) or at `.where()` (the session sources).
            const failed = () => Promise.reject(new Error('connection terminated'));
            const query = { then: (ok: () => unknown, ko: (err: unknown) => unknown) => failed().then(ok, ko), where: failed };
            return () => ({ from: () => query });
          }
          return Reflect.get(target, prop, receiver) as unknown;
        },
      });
      return { handle: { ...real, db } as DatabaseHandle, state };
    }

    it('sees a new bar within the freshness bounds, and at once after invalidate()', async () => {
      const primary = await standIn(profile(NOTCH_ID, 'Notch'));
      const { internal, deps } = setup([{ name: 'mojang', at: primary, primary: true }]);
      const status = async () => (await internal.request(path(login))).status;
      try {
        expect(await status()).toBe(200);
        await bar(database().db);
        expect(await status()).toBe(200); // the snapshot is fresh
        deps.clock.advance(BAR_FRESH_MS);
        await vi.waitFor(async () => expect(await status()).toBe(204)); // refreshed behind a stale answer

        await database().db.delete(barredPlayers);
        deps.clock.advance(BAR_MAX_STALE_MS);
        expect(await status()).toBe(200); // too old to answer: this login waited for the read

        await bar(database().db);
        deps.sessionVerifier!.barList.invalidate();
        expect(await status()).toBe(204);
      } finally {
        await database().db.delete(barredPlayers);
      }
    });

    it('answers from the snapshot while a refresh fails, and 500 once it is too old', async () => {
      const primary = await standIn(profile(NOTCH_ID, 'Notch'));
      const { handle, state } = switchable();
      const { internal, deps } = setup([{ name: 'mojang', at: primary, primary: true }], { db: handle });
      expect((await internal.request(path(login))).status).toBe(200);
      state.broken = true;
      deps.clock.advance(BAR_FRESH_MS);
      expect((await internal.request(path(login))).status).toBe(200);
      await vi.waitFor(() =>
        expect(deps.captured.lines().some((l) => l.msg === 'bar list refresh failed; the snapshot in memory still answers')).toBe(true),
      );
      deps.clock.advance(BAR_MAX_STALE_MS - BAR_FRESH_MS);
      const res = await internal.request(path(login));
      expect(res.status).toBe(500);
      expect((await errorOf(res)).code).toBe('internal');
      state.broken = false;
      expect((await internal.request(path(login))).status).toBe(200);
    });
  });

  describe('failures', () => {
    const failures: Array<[string, Behaviour]> = [
      ['5xx', { kind: 'status', status: 500, body: '{"error":"boom"}' }],
      ['an unexpected 4xx', { kind: 'status', status: 403 }],
      ['a redirect (never followed)', { kind: 'redirect', location: '/session/minecraft/hasJoined?elsewhere' }],
      ['malformed JSON', { kind: 'malformed' }],
      ['200 without an id', { kind: 'profile', body: { name: 'Notch', properties: [] } }],
      ['200 with a non-array properties', { kind: 'profile', body: { id: NOTCH_ID, name: 'Notch', properties: 'x' } }],
      ['200 with an empty body', { kind: 'status', status: 200 }],
      ['an answer over 64 KiB', profile(NOTCH_ID, 'Notch', [{ name: 'textures', value: 'x'.repeat(70_000) }])],
    ];

    it.each(failures)('answers 503 with no body when nothing validated and a source sent %s', async (_, failing) => {
      const { elyby, internal, deps } = await pair(noContent, failing);
      const res = await internal.request(path(login));
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(elyby.hasJoinedRequests()).toHaveLength(1);
      expect(elyby.requests.filter((r) => r.query.has('elsewhere'))).toHaveLength(0);
      const metrics = await deps.metrics.registry.metrics();
      expect(metrics).toMatch(/felis_session_source_outcomes_total\{source="elyby",outcome="failed_\w+"\} 1/);
    });

    it('answers 503 when a third-party id does not parse and nothing else validated', async () => {
      const { internal } = await pair(noContent, profile('0123', 'Notch'));
      expect((await internal.request(path(login))).status).toBe(503);
    });

    it('answers 503 when a source refuses connections', async () => {
      const closed = await standIn();
      await closed.close();
      const primary = await standIn(noContent);
      const { internal, deps } = setup([
        { name: 'mojang', at: primary, primary: true },
        { name: 'gone', at: closed.url },
      ]);
      expect((await internal.request(path(login))).status).toBe(503);
      expect(await deps.metrics.registry.metrics()).toContain(
        'felis_session_source_outcomes_total{source="gone",outcome="failed_transport"} 1',
      );
    });

    it('answers 503 after the per-source time-out when a source hangs', async () => {
      const { internal, deps } = await pair({ kind: 'hang' }, noContent, { timeoutMs: 150 });
      const started = performance.now();
      const res = await internal.request(path(login));
      const elapsed = performance.now() - started;
      expect(res.status).toBe(503);
      expect(elapsed).toBeGreaterThanOrEqual(140);
      expect(elapsed).toBeLessThan(3000);
      expect(await deps.metrics.registry.metrics()).toContain(
        'felis_session_source_outcomes_total{source="mojang",outcome="failed_timeout"} 1',
      );
    });

    it('answers the 500 envelope when the bar-list lookup fails, and logs it', async () => {
      const real = database();
      const broken = {
        ...real,
        // Every read fails, whether awaited at `.from()` (the bar list) or at `.where()` (the session sources).
        db: {
          select: () => ({
            from: () => {
              const failed = () => Promise.reject(new Error('connection terminated'));
              return { then: (ok: () => unknown, ko: (err: unknown) => unknown) => failed().then(ok, ko), where: failed };
            },
          }),
        },
      } as unknown as DatabaseHandle;
      const primary = await standIn(profile(NOTCH_ID, 'Notch'));
      const { internal, deps } = setup([{ name: 'mojang', at: primary, primary: true }], { db: broken });
      const res = await internal.request(path(login));
      expect(res.status).toBe(500);
      const error = await errorOf(res);
      expect(error.code).toBe('internal');
      expect(error.request_id).toBe(res.headers.get('x-request-id'));
      expect(deps.captured.lines().some((l) => l.msg === 'hasJoined failed (bar-list lookup)')).toBe(true);
    });
  });

  describe('priority', () => {
    /**
     * Checks that the response is still pending once `lower` has answered (and the app has had
     * 100 ms to act on that answer), then hands the pending response back (wrapped, or the
     * caller's await would wait for it).
     */
    async function stillWaitingAfter(response: Response | Promise<Response>, lower: SessionStandIn) {
      let settled = false;
      const pending = Promise.resolve(response).then((res) => {
        settled = true;
        return res;
      });
      await lower.answered(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(settled).toBe(false);
      return { pending };
    }

    it("makes a lower source's early success wait for the slow primary, which then wins", async () => {
      const { primary, elyby, internal } = await pair(
        { kind: 'held', then: profile(NOTCH_ID, 'Notch') },
        profile(JEB_ID, 'Notch'),
      );
      const { pending } = await stillWaitingAfter(internal.request(path(login)), elyby);
      primary.release();
      const res = await pending;
      expect(await res.json()).toMatchObject({ id: NOTCH_ID });
    });

    it("answers the lower source's success once the slow primary says no", async () => {
      const { primary, elyby, internal } = await pair({ kind: 'held', then: noContent }, profile(JEB_ID, 'jeb_'));
      const { pending } = await stillWaitingAfter(internal.request(path({ username: 'jeb_', serverId: 'abc' })), elyby);
      primary.release();
      expect(await (await pending).json()).toEqual({ id: JEB_AT_ELYBY, name: 'jeb_', properties: TEXTURES });
    });

    it('never waits for a hanging lower source once the primary validated', async () => {
      const { internal, deps } = await pair(profile(NOTCH_ID, 'Notch'), { kind: 'hang' }, { timeoutMs: 10_000 });
      const started = performance.now();
      const res = await internal.request(path(login));
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(await deps.metrics.registry.metrics()).not.toContain('source="elyby",outcome=');
    });

    it('never waits for a hanging source below the winning secondary', async () => {
      const primary = await standIn(noContent);
      const elyby = await standIn(profile(JEB_ID, 'jeb_'));
      const hanging = await standIn({ kind: 'hang' });
      const { internal } = setup(
        [
          { name: 'mojang', at: primary, primary: true, profileAt: primary },
          { name: 'elyby', at: elyby },
          { name: 'backup', at: hanging },
        ],
        { timeoutMs: 10_000 },
      );
      const started = performance.now();
      const res = await internal.request(path({ username: 'jeb_', serverId: 'abc' }));
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2000);
    });
  });

  describe('transport', () => {
    it('keeps the connection to a source alive between logins', async () => {
      const { primary, internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      for (let i = 0; i < 5; i += 1) expect((await internal.request(path(login))).status).toBe(200);
      expect(primary.connections).toBe(1);
    });

    it('counts requests, outcomes and latency per source on /metrics', async () => {
      const { internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      await internal.request(path(login));
      await internal.request(path(login));
      const text = await (await internal.request('/metrics')).text();
      expect(text).toContain('felis_session_source_requests_total{source="mojang"} 2');
      expect(text).toContain('felis_session_source_outcomes_total{source="mojang",outcome="validated"} 2');
      expect(text).toMatch(/felis_session_source_duration_seconds_count\{source="mojang",outcome="validated"\} 2/);
      expect(text).toContain('felis_http_requests_total{face="internal",method="GET",route="/session/minecraft/hasJoined",status="200"} 2');
    });

    it('is served only on the internal face and documented there', async () => {
      const { internal, external } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      expect((await external.request(path(login))).status).toBe(404);
      const doc = (await (await internal.request('/openapi/internal.json')).json()) as {
        paths: Record<string, { get?: { parameters?: Array<{ name: string }> } }>;
      };
      const op = doc.paths['/session/minecraft/hasJoined']?.get;
      expect(op?.parameters?.map((p) => p.name)).toEqual(['username', 'serverId', 'ip']);
    });

    it('answers 400 without a body to a request that declares one, and asks no source', async () => {
      const { primary, internal } = await pair(profile(NOTCH_ID, 'Notch'), noContent);
      for (const headers of [{ 'Content-Length': '5' }, { 'Transfer-Encoding': 'chunked' }] as Array<Record<string, string>>) {
        const res = await internal.request(path(login), { headers: { 'Content-Type': 'text/plain', ...headers } });
        expect(res.status).toBe(400);
        expect(res.headers.get('connection')).toBe('close');
        expect(await res.text()).toBe('');
      }
      expect(primary.requests).toHaveLength(0);
    });
  });
});
