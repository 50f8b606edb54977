import { describe, expect, it } from 'vitest';
import { appendBuildLog, insertBuild, moveBuild } from '../../src/features/builds/service.js';
import { createTestApps, createTestDeps, type TestDeps } from '../helpers/app.js';
import { consoleCast, runningServer } from '../helpers/console.js';
import { useTestDatabase } from '../helpers/database.js';
import { createUser, signIn } from '../helpers/sessions.js';
import { SseReader, type SseEvent } from '../helpers/sse.js';

/**
 * A console or build-log stream that loses its replica resumes on another through
 * `Last-Event-ID`, with no lost and no repeated line: two service instances on one database and
 * one cluster (and one clock, as two processes share the time), replica A's shutdown cutting its
 * streams inside a second that goes on receiving lines, the client reconnecting to replica B.
 */
describe('streams resumed on another replica', () => {
  const database = useTestDatabase();

  function twoReplicas(): { a: TestDeps; b: TestDeps; killA: () => void } {
    const shutdownA = new AbortController();
    const a = createTestDeps(database(), { overrides: { shutdown: shutdownA.signal } });
    const b = createTestDeps(database(), { overrides: { cluster: a.cluster, serverCache: a.serverCache, clock: a.clock } });
    return { a, b, killA: () => shutdownA.abort() };
  }

  const lines = (events: SseEvent[]) => events.map(({ id, data }) => ({ id, data: data.replace(/^\[[^\]]+\]: /, '') }));

  it('the console: cut on A inside a second, resumed on B from any line of that second, every line exactly once and in order', async () => {
    const { a, b, killA } = twoReplicas();
    const name = await runningServer(a);
    const { owner } = await consoleCast(a, name);
    const apps = [createTestApps(a).external, createTestApps(b).external];
    const open = async (replica: 0 | 1, lastEventId?: string) => {
      const res = await apps[replica]!.request(`/api/v1/servers/${name}/console`, {
        headers: { ...owner.headers, Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
      });
      expect(res.status).toBe(200);
      return new SseReader(res.body!);
    };
    const has = (text: string) => (r: SseReader) => r.messages().some((e) => e.data.endsWith(text));

    const onA = await open(0);
    await onA.until(has('Done (5.012s)! For help, type "help"'));
    for (let i = 0; i < 3; i++) a.cluster.pods.write(name, `x${i}`);
    await onA.until(has('x2'));
    // A viewer already on B: B's hub began inside this second, with reads and boundaries of its own.
    const onB = await open(1);
    await onB.until(has('x2'));

    killA();
    await onA.until((r) => r.ended);
    for (let i = 3; i < 6; i++) a.cluster.pods.write(name, `x${i}`);
    a.clock.advance(1_000);
    a.cluster.pods.write(name, 'y0');
    a.cluster.pods.write(name, 'y1');
    await onB.until(has('y1'));
    const full = lines(onB.messages());
    const seenOnA = lines(onA.messages());
    // One numbering on both replicas: what A sent is the start of what B sends.
    expect(full.slice(0, seenOnA.length)).toEqual(seenOnA);
    const second = Math.floor(a.clock.now().getTime() / 1000) - 1;
    expect(full.slice(-8)).toEqual([
      ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: `${second}.${String(5 + i).padStart(6, '0')}`, data: `x${i}` })),
      { id: `${second + 1}.000000`, data: 'y0' },
      { id: `${second + 1}.000001`, data: 'y1' },
    ]);

    // The client resumes on B from the last line it got on A, or from any earlier line of that second
    // (a cut anywhere in it): what it had plus what B sends is every line once, in order.
    const cuts = seenOnA.map((line, at) => ({ line, at })).filter(({ line }) => line.id!.startsWith(`${second}.`));
    expect(cuts.length).toBe(8);
    for (const { line, at } of cuts.reverse().slice(0, 4)) {
      const resumed = await open(1, line.id);
      await resumed.until((r) => r.messages().length >= full.length - at - 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect([...seenOnA.slice(0, at + 1), ...lines(resumed.messages())], `resumed after ${line.id}`).toEqual(full);
      await resumed.cancel();
    }

    // B with no viewer left (its hub gone): a new hub numbers the pod log the same way.
    await onB.cancel();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(b.consoleLogs.upstreams).toBe(0);
    const last = seenOnA.at(-1)!;
    const fresh = await open(1, last.id);
    await fresh.until((r) => r.messages().length >= full.length - seenOnA.length);
    expect([...seenOnA, ...lines(fresh.messages())]).toEqual(full);
    await fresh.cancel();
  });

  it('the build log: cut on A inside a second, resumed on B from any line, every line exactly once and in order', async () => {
    const { a, b, killA } = twoReplicas();
    const admin = await createUser(a, { role: 'admin' });
    const { headers } = await signIn(a, { userId: admin.id });
    const apps = [createTestApps(a).external, createTestApps(b).external];
    const build = await insertBuild(a, a.database.db, { imageRef: 'registry.felis.test/replicas:1', requestedBy: admin.id, dockerfile: 'FROM x' });
    await moveBuild(a, build.id, 'building');
    const open = async (replica: 0 | 1, lastEventId?: string) => {
      const res = await apps[replica]!.request(`/api/v1/images/build/${build.id}/logs`, { headers: { ...headers, ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) } });
      expect(res.status).toBe(200);
      return new SseReader(res.body!);
    };

    await appendBuildLog(a, build.id, ['l0', 'l1', 'l2']);
    const onA = await open(0);
    await onA.until((r) => r.messages().length === 3);
    killA();
    await onA.until((r) => r.ended);
    const seenOnA = lines(onA.messages());
    const second = Math.floor(a.clock.now().getTime() / 1000);
    expect(seenOnA.map((l) => l.id)).toEqual([0, 1, 2].map((i) => `${second}.00000${i}`));

    // The client reconnects to B with the last id it got, while the build goes on writing in that second.
    const resumed = await open(1, seenOnA.at(-1)!.id);
    await appendBuildLog(b, build.id, ['l3', 'l4']);
    b.clock.advance(1_000);
    await appendBuildLog(b, build.id, ['m0']);
    await moveBuild(b, build.id, 'failed', { error: 'the test ends it' });
    await resumed.until((r) => r.ended, 10_000);
    const full = [
      ...[0, 1, 2, 3, 4].map((i) => ({ id: `${second}.00000${i}`, data: `l${i}` })),
      { id: `${second + 1}.000000`, data: 'm0' },
    ];
    expect([...seenOnA, ...lines(resumed.messages())]).toEqual(full);

    // A cut at any line (the client got fewer than A sent): the rest comes from B once.
    for (let at = 0; at < full.length; at++) {
      const again = await open(1, full[at]!.id);
      await again.until((r) => r.ended);
      expect([...full.slice(0, at + 1), ...lines(again.messages())], `resumed after ${full[at]!.id}`).toEqual(full);
    }
  });
});
