import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { PodLogOptions } from '../../adapters/cluster/types.js';
import { sessions } from '../../db/schema/accounts.js';
import { eventStreams } from '../../db/schema/console.js';
import { serverClaims } from '../../db/schema/servers.js';
import { createTestApps, createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { consoleCast, runningServer } from '../../../test/helpers/console.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer } from '../../../test/helpers/servers.js';
import { SseReader } from '../../../test/helpers/sse.js';
import { describeTierMatrix } from '../../../test/helpers/tiers.js';
import { LogHubs, TAIL_LINES } from './log-hub.js';
import type { StreamTimings } from './sse.js';
import { STREAMS_PER_ACCOUNT } from './stream-slots.js';

const database = useTestDatabase();

/** Deps whose console hubs run on short timers, counting the followed pod logs they open. */
function streamDeps(timings: Partial<StreamTimings> = {}) {
  const shutdown = new AbortController();
  const deps = createTestDeps(database(), { overrides: { shutdown: shutdown.signal } });
  const follows = { opened: 0, open: 0 };
  const podLogs = deps.cluster.podLogs.bind(deps.cluster);
  deps.cluster.podLogs = (name: string, options: PodLogOptions) => {
    if (!options.follow) return podLogs(name, options);
    follows.opened += 1;
    follows.open += 1;
    const inner = podLogs(name, options);
    return (async function* () {
      try {
        yield* inner;
      } finally {
        follows.open -= 1;
      }
    })();
  };
  deps.consoleLogs = new LogHubs({ cluster: deps.cluster, clock: deps.clock, log: deps.log }, timings);
  return { deps, shutdown, follows };
}

async function open(deps: TestDeps, name: string, headers: Record<string, string>, lastEventId?: string) {
  const { external } = createTestApps(deps);
  const res = await external.request(`/api/v1/servers/${name}/console`, {
    headers: { ...headers, Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
  });
  if (res.status !== 200) return { status: res.status, error: ((await res.json()) as { error: { code: string } }).error.code, headers: res.headers };
  return { status: 200, reader: new SseReader(res.body!), headers: res.headers };
}

const second = (deps: TestDeps) => Math.floor(deps.clock.now().getTime() / 1000);

describe('GET /servers/{name}/console', () => {
  it('streams the tail, then new lines, each with its unix second and its number within that second as id', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    const stream = await open(deps, name, owner.headers);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = stream.reader!;
    await reader.until((r) => r.messages().some((e) => e.data.includes('Done (')));
    // Four boot lines five seconds ago, five lines as it came up.
    expect(reader.messages().map((e) => e.id)).toEqual([
      ...[0, 1, 2, 3].map((i) => `${second(deps) - 5}.00000${i}`),
      ...[0, 1, 2, 3, 4].map((i) => `${second(deps)}.00000${i}`),
    ]);
    expect(reader.messages()[0]).toEqual({ event: 'message', id: `${second(deps) - 5}.000000`, data: '[12:00:00 INFO]: Starting minecraft server version 1.21.4' });
    deps.clock.advance(2_000);
    deps.cluster.pods.write(name, '§aColoured§r chat line');
    deps.cluster.pods.write(name, 'in the same second');
    await reader.until((r) => r.messages().some((e) => e.data.includes('same second')));
    expect(reader.messages().slice(-2)).toEqual([
      { event: 'message', id: `${second(deps)}.000000`, data: '[12:00:07 INFO]: §aColoured§r chat line' },
      { event: 'message', id: `${second(deps)}.000001`, data: '[12:00:07 INFO]: in the same second' },
    ]);
    await reader.cancel();
  });

  it('resumes exactly after the Last-Event-ID line, not the tail, on this replica and on one with no history', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    const first = (await open(deps, name, owner.headers)).reader!;
    deps.cluster.pods.write(name, 'seen, in the second of the boot');
    await first.until((r) => r.messages().some((e) => e.data.includes('seen,')));
    await first.cancel();
    const lastSeen = first.messages().at(-1)!.id!;
    expect(lastSeen).toBe(`${second(deps)}.000005`);
    deps.cluster.pods.write(name, 'missed, in that second too');
    deps.clock.advance(1_000);
    for (let i = 0; i < TAIL_LINES + 50; i++) deps.cluster.pods.write(name, `missed ${i}`);
    deps.clock.advance(1_000);
    deps.cluster.pods.write(name, 'missed last');

    const expected = ['missed, in that second too', ...Array.from({ length: TAIL_LINES + 50 }, (_, i) => `missed ${i}`), 'missed last'];
    const text = (r: SseReader) => r.messages().map((e) => e.data.replace(/^\[[^\]]+\]: /, ''));
    const resumed = (await open(deps, name, owner.headers, lastSeen)).reader!;
    await resumed.until((r) => r.messages().length >= expected.length);
    expect(text(resumed)).toEqual(expected);
    expect(resumed.messages()[0]!.id).toBe(`${Number(lastSeen.split('.')[0])}.000006`);
    deps.cluster.pods.write(name, 'live after resume');
    await resumed.until((r) => r.messages().length === expected.length + 1);
    await resumed.cancel();

    // Another replica (its own hubs, no history of its own) numbers the pod log the same way.
    deps.consoleLogs = new LogHubs({ cluster: deps.cluster, clock: deps.clock, log: deps.log });
    const elsewhere = (await open(deps, name, owner.headers, lastSeen)).reader!;
    await elsewhere.until((r) => r.messages().length >= expected.length + 1);
    expect(text(elsewhere)).toEqual([...expected, 'live after resume']);
    expect(elsewhere.messages().map((e) => e.id)).toEqual(resumed.messages().map((e) => e.id));
    await elsewhere.cancel();
  });

  it('resumes a whole-second Last-Event-ID (an older client) from the first line of that second', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    deps.clock.advance(1_000);
    deps.cluster.pods.write(name, 'a second later');
    const reader = (await open(deps, name, owner.headers, String(second(deps) - 1))).reader!;
    await reader.until((r) => r.messages().some((e) => e.data.includes('a second later')));
    // The five lines of the second it came up in (the client may hold some of them: a whole second cannot say which), then the later one.
    expect(reader.messages().map((e) => e.id)).toEqual([...[0, 1, 2, 3, 4].map((i) => `${second(deps) - 1}.00000${i}`), `${second(deps)}.000000`]);
    expect(reader.messages()[0]!.data).toContain('[LuckPerms]');
    await reader.cancel();
  });

  it('holds new lines back from a viewer resuming after a line this replica has not read yet (another read further)', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    // The pod's log holds lines 0 to 4 of this second; the client says it has line 6 (read elsewhere, a moment later).
    const reader = (await open(deps, name, owner.headers, `${second(deps)}.000006`)).reader!;
    for (const text of ['five', 'six', 'seven', 'eight']) deps.cluster.pods.write(name, text);
    await reader.until((r) => r.messages().length >= 2);
    expect(reader.messages().map((e) => [e.id, e.data.replace(/^\[[^\]]+\]: /, '')])).toEqual([
      [`${second(deps)}.000007`, 'seven'],
      [`${second(deps)}.000008`, 'eight'],
    ]);
    await reader.cancel();
  });

  it('serves the tail when Last-Event-ID is older than an hour or in the future; a malformed one is 400', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    for (const id of [String(second(deps) - 3601), `${second(deps) - 3601}.000002`, String(second(deps) + 60), `${second(deps) + 60}.000000`]) {
      const reader = (await open(deps, name, owner.headers, id)).reader!;
      await reader.until((r) => r.messages().some((e) => e.data.includes('Done (')));
      expect(reader.messages()[0]!.data).toContain('Starting minecraft server');
      await reader.cancel();
    }
    for (const id of ['abc', `${second(deps)}.5`, `${second(deps)}.0000001`, `${second(deps)}.`, `-${second(deps)}`, `${second(deps)} .000001`, '1e9']) {
      const bad = await open(deps, name, owner.headers, id);
      expect([bad.status, bad.error], id).toEqual([400, 'bad_request']);
    }
  });

  it('feeds every viewer of a server from one followed pod log', async () => {
    const { deps, follows } = streamDeps();
    const name = await runningServer(deps);
    const { owner, admin } = await consoleCast(deps, name);
    const viewers = [];
    for (const who of [owner, owner, admin]) viewers.push((await open(deps, name, who.headers)).reader!);
    deps.cluster.pods.write(name, 'to all');
    for (const viewer of viewers) await viewer.until((r) => r.messages().some((e) => e.data.endsWith('to all')));
    expect([follows.opened, follows.open, deps.consoleLogs.upstreams]).toEqual([1, 1, 1]);
    for (const viewer of viewers) await viewer.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([follows.open, deps.consoleLogs.upstreams]).toEqual([0, 0]);
  });

  it('ends with event: revoked when the session is revoked or the ownership is gone', async () => {
    const { deps } = streamDeps({ recheckMs: 40 });
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    const reader = (await open(deps, name, owner.headers)).reader!;
    // A minute on: the re-check slides the session (as any request would) and renews the stream's lease.
    deps.clock.advance(61_000);
    const renewedUntil = deps.clock.now().getTime() + 80;
    await expect
      .poll(async () => (await deps.database.db.select().from(eventStreams).where(eq(eventStreams.userId, owner.id)))[0]?.expiresAt.getTime())
      .toBe(renewedUntil);
    expect(reader.ended).toBe(false);
    await deps.database.db.update(sessions).set({ revokedAt: deps.clock.now() }).where(eq(sessions.tokenHash, owner.tokenHash));
    await reader.until((r) => r.ended);
    expect(reader.events.at(-1)).toEqual({ event: 'revoked', data: 'revoked' });

    const other = await runningServer(deps);
    const cast = await consoleCast(deps, other);
    const second = (await open(deps, other, cast.owner.headers)).reader!;
    await deps.database.db.delete(serverClaims).where(and(eq(serverClaims.serverName, other), eq(serverClaims.userId, cast.owner.id)));
    await second.until((r) => r.ended);
    expect(second.events.at(-1)!.event).toBe('revoked');
  });

  it('closes after its lifetime, at shutdown and when the pod ends; writes keep-alives while quiet', async () => {
    const { deps, shutdown } = streamDeps({ lifetimeMs: 150, keepAliveMs: 30 });
    const name = await runningServer(deps);
    const { owner, admin } = await consoleCast(deps, name);
    const timed = (await open(deps, name, owner.headers)).reader!;
    await timed.until((r) => r.ended);
    expect(timed.comments).toBeGreaterThanOrEqual(2);
    expect(timed.events.some((e) => e.event === 'revoked')).toBe(false);

    deps.consoleLogs = new LogHubs({ cluster: deps.cluster, clock: deps.clock, log: deps.log });
    const atShutdown = (await open(deps, name, owner.headers)).reader!;
    shutdown.abort();
    await atShutdown.until((r) => r.ended);
    expect(await open(deps, name, owner.headers)).toMatchObject({ status: 503, error: 'unavailable' });

    const podEnds = await runningServer(deps);
    const cast = await consoleCast(deps, podEnds);
    deps.shutdown = new AbortController().signal;
    deps.consoleLogs = new LogHubs({ cluster: deps.cluster, clock: deps.clock, log: deps.log });
    const reader = (await open(deps, podEnds, cast.owner.headers)).reader!;
    await deps.cluster.setDesiredState(podEnds, 'Stopped');
    deps.clock.advance(deps.cluster.options.stopDelayMs);
    deps.cluster.tick();
    await reader.until((r) => r.ended);
    expect(admin).toBeDefined();
  });

  it('drops a viewer who stops reading instead of buffering for it', async () => {
    const { deps } = streamDeps({ maxQueuedBytes: 8 * 1024 });
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    const { external } = createTestApps(deps);
    const stalled = await external.request(`/api/v1/servers/${name}/console`, { headers: owner.headers });
    const reading = (await open(deps, name, owner.headers)).reader!;
    for (let i = 0; i < 400; i++) deps.cluster.pods.write(name, `line ${i} ${'x'.repeat(80)}`);
    await reading.until((r) => r.messages().some((e) => e.data.includes('line 399')));
    expect(deps.consoleLogs.hub(name).viewers).toBe(1);
    await reading.cancel();
    await stalled.body!.cancel();
  });

  it('answers 409 without a pod, 403 to a stranger, 404 for an unknown server, 429 past the per-account cap', async () => {
    const { deps } = streamDeps();
    const stopped = addServer(deps).spec.name;
    const name = await runningServer(deps);
    const cast = await consoleCast(deps, name);
    await deps.database.db.insert(serverClaims).values({ serverName: stopped, subdomain: stopped, userId: cast.owner.id, claimedAt: deps.clock.now() });
    expect(await open(deps, stopped, cast.owner.headers)).toMatchObject({ status: 409, error: 'not_running' });
    expect(await open(deps, name, cast.stranger.headers)).toMatchObject({ status: 403, error: 'forbidden' });
    expect(await open(deps, 'nosuchserver', cast.owner.headers)).toMatchObject({ status: 404 });

    const readers = [];
    for (let i = 0; i < STREAMS_PER_ACCOUNT; i++) readers.push((await open(deps, name, cast.owner.headers)).reader!);
    const refused = await open(deps, name, cast.owner.headers);
    expect(refused).toMatchObject({ status: 429, error: 'rate_limited' });
    expect(refused.headers.get('retry-after')).toBe('120');
    expect((await open(deps, name, cast.admin.headers)).status).toBe(200);
    await readers[0]!.cancel();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const again = await open(deps, name, cast.owner.headers);
    expect(again.status).toBe(200);
    for (const reader of [...readers, again.reader!]) await reader.cancel();
  });

  it('answers 503 with a warn line, not 409 not_running, when the cluster refuses the pod log (500, or 403 from RBAC)', async () => {
    for (const status of [500, 403]) {
      const { deps } = streamDeps();
      const name = await runningServer(deps);
      const { owner } = await consoleCast(deps, name);
      // What the client's Log raises for a refused pods/log request: an error carrying the status code.
      deps.cluster.podLogs = () =>
        (async function* () {
          throw Object.assign(new Error(`HTTP-Code: ${status} Message: Error occurred in log request`), { code: status });
        })();
      expect(await open(deps, name, owner.headers)).toMatchObject({ status: 503, error: 'unavailable' });
      const lines = deps.captured.lines();
      expect(lines.find((l) => l.msg === 'console log unreadable')).toMatchObject({ level: 'warn', server: name, status });
      expect(lines.some((l) => l.msg === 'console log stream ended')).toBe(false);
    }
  });
});

describeTierMatrix(database, 'app', [{ method: 'get', path: '/api/v1/servers/survival/console' }]);

describe('console tail', () => {
  it('shows the last lines to a new viewer even when the last hour was quiet', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    deps.clock.advance(2 * 3600_000);
    const reader = (await open(deps, name, owner.headers)).reader!;
    await reader.until((r) => r.messages().some((e) => e.data.includes('Done (')));
    expect(reader.messages()[0]!.data).toContain('Starting minecraft server');
    deps.cluster.pods.write(name, 'after the quiet');
    await reader.until((r) => r.messages().at(-1)?.data.endsWith('after the quiet') === true);
    expect(reader.messages().filter((e) => e.data.includes('Done ('))).toHaveLength(1);
    await reader.cancel();
  });

  it('numbers a tail that begins inside a second as a read of that whole second numbers it', async () => {
    const { deps } = streamDeps();
    const name = await runningServer(deps);
    const { owner } = await consoleCast(deps, name);
    deps.clock.advance(1_000);
    const burst = second(deps);
    for (let i = 0; i < TAIL_LINES + 50; i++) deps.cluster.pods.write(name, `burst ${i}`);
    deps.clock.advance(2 * 3600_000);
    const reader = (await open(deps, name, owner.headers)).reader!;
    await reader.until((r) => r.messages().length >= TAIL_LINES);
    // The last 100 lines, numbered from the first line of their second (50 lines before the tail).
    expect(reader.messages()[0]).toMatchObject({ id: `${burst}.000050`, data: expect.stringContaining('burst 50') });
    expect(reader.messages().at(-1)).toMatchObject({ id: `${burst}.000149`, data: expect.stringContaining('burst 149') });
    await reader.cancel();
  });
});
