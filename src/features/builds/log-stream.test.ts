import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { createTestApps, errorOf, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { ExternalJobs, laneDeps } from '../../../test/helpers/lane-deps.js';
import { STREAMS_PER_ACCOUNT } from '../console/stream-slots.js';
import { buildLogSources, builds } from '../../db/schema/builds.js';
import { COPY_COMPLETE_SOURCE } from './log-copy.js';
import { buildLogEvents, STREAM_RULES } from './log-stream.js';
import { appendBuildLog, insertBuild, moveBuild } from './service.js';

async function newBuild(deps: TestDeps) {
  return insertBuild(deps, deps.database.db, { imageRef: 'registry.felis.test/a:1', requestedBy: 'someone', dockerfile: 'FROM x' });
}

/** Reads events until the stream ends (or `until` says stop). */
async function readEvents(stream: ReadableStream<Uint8Array>, until?: (text: string) => boolean): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value);
    if (until?.(text)) {
      await reader.cancel();
      return text;
    }
  }
}

const dataLines = (text: string) => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));

describe('the build log stream', () => {
  const database = useTestDatabase();

  it('replays the log with ids numbering the lines of each second, resumes after the Last-Event-ID line within the hour, and ends once the build is terminal', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const build = await newBuild(deps);
    await appendBuildLog(deps, build.id, ['one', 'two\nthree']);
    const second = Math.floor(deps.clock.now().getTime() / 1000);
    deps.clock.advance(5000);
    await appendBuildLog(deps, build.id, ['four']);
    await moveBuild(deps, build.id, 'building');
    await moveBuild(deps, build.id, 'failed', { error: 'x' });
    const read = (lastEventId?: string) => readEvents(buildLogEvents(deps, { buildId: build.id, ...(lastEventId ? { lastEventId } : {}), stillAllowed: async () => true }));

    const all = await read();
    expect(dataLines(all)).toEqual(['one', 'two', 'three', 'four']);
    expect(all).toContain(`id: ${second}.000000\ndata: one\n\n`);
    expect(all).toContain(`id: ${second}.000001\ndata: two\n\n`);
    expect(all).toContain(`id: ${second}.000002\ndata: three\n\n`);
    expect(all).toContain(`id: ${second + 5}.000000\ndata: four\n\n`);

    // After a line: exactly what follows it, with the same ids.
    const afterTwo = await read(`${second}.000001`);
    expect(dataLines(afterTwo)).toEqual(['three', 'four']);
    expect(afterTwo).toContain(`id: ${second}.000002\ndata: three\n\n`);
    expect(dataLines(await read(`${second + 5}.000000`))).toEqual([]);
    // A whole second (an older client): from that second's first line.
    expect(dataLines(await read(String(second)))).toEqual(['one', 'two', 'three', 'four']);
    expect(dataLines(await read(String(second + 5)))).toEqual(['four']);
    expect(dataLines(await read(String(second + 3)))).toEqual(['four']);
    // A line this build does not have in that second: from the next second.
    expect(dataLines(await read(`${second}.000007`))).toEqual(['four']);
    // Outside the resume window (or malformed, which the route refuses first), the whole log is sent again.
    deps.clock.advance(2 * 3600 * 1000);
    for (const lastEventId of [String(second + 5), `${second + 5}.000000`, 'nonsense']) {
      expect(dataLines(await read(lastEventId))).toHaveLength(4);
    }
  });

  it('resumes a running build after its last line: later lines of that second keep their numbers', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const build = await newBuild(deps);
    await moveBuild(deps, build.id, 'building');
    await appendBuildLog(deps, build.id, ['a', 'b']);
    const second = Math.floor(deps.clock.now().getTime() / 1000);
    const resumed = readEvents(buildLogEvents(deps, { buildId: build.id, lastEventId: `${second}.000001`, stillAllowed: async () => true, rules: { pollMs: 5 } }));
    await appendBuildLog(deps, build.id, ['c', 'd']);
    deps.clock.advance(1000);
    await appendBuildLog(deps, build.id, ['e']);
    await moveBuild(deps, build.id, 'failed', { error: 'x' });
    const text = await resumed;
    expect(dataLines(text)).toEqual(['c', 'd', 'e']);
    expect(text.split('\n').filter((l) => l.startsWith('id: '))).toEqual([`id: ${second}.000002`, `id: ${second}.000003`, `id: ${second + 1}.000000`]);
  });

  it('resumes from a second no line has reached yet with the lines stored later', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const build = await newBuild(deps);
    await moveBuild(deps, build.id, 'building');
    await appendBuildLog(deps, build.id, ['early']);
    deps.clock.advance(3000);
    const now = Math.floor(deps.clock.now().getTime() / 1000);
    const resumed = readEvents(buildLogEvents(deps, { buildId: build.id, lastEventId: String(now), stillAllowed: async () => true, rules: { pollMs: 5 } }));
    await appendBuildLog(deps, build.id, ['late']);
    await moveBuild(deps, build.id, 'failed', { error: 'x' });
    expect(dataLines(await resumed)).toEqual(['late']);
  });

  it('follows a running build, keeps the stream alive, and ends it with event: revoked once access is gone', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const build = await newBuild(deps);
    await moveBuild(deps, build.id, 'building');
    let allowed = true;
    const stream = buildLogEvents(deps, {
      buildId: build.id,
      stillAllowed: async () => allowed,
      rules: { pollMs: 5, recheckMs: 1000, keepAliveMs: 500 },
    });
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    };
    await appendBuildLog(deps, build.id, ['compiling']);
    await readUntil('data: compiling');
    deps.clock.advance(600);
    await readUntil(': keep-alive');
    allowed = false;
    deps.clock.advance(1000);
    await readUntil('event: revoked');
    expect(text).toContain('event: revoked\ndata: revoked\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('on Kubernetes keeps an ended build’s stream open until the copy of its steps is complete, or a grace has passed', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const withJob = async () => {
      const row = await newBuild(deps);
      await deps.database.db.update(builds).set({ jobName: `felis-build-${row.id.slice(0, 8)}` }).where(eq(builds.id, row.id));
      return row;
    };
    const build = await withJob();
    await moveBuild(deps, build.id, 'building');
    await appendBuildLog(deps, build.id, ['[fetch] context fetched']);
    await moveBuild(deps, build.id, 'failed', { error: 'the scan gate blocked the image' });
    let text = '';
    const reading = readEvents(buildLogEvents(deps, { buildId: build.id, copied: true, stillAllowed: async () => true, rules: { pollMs: 10 } }), (t) => ((text = t), false));
    // The gate step's lines are copied after the build failed; the stream still carries them.
    await appendBuildLog(deps, build.id, ['[gate] {"blocked":true}']);
    await vi.waitFor(() => expect(dataLines(text)).toEqual(['[fetch] context fetched', '[gate] {"blocked":true}']));
    await deps.database.db.insert(buildLogSources).values({ buildId: build.id, source: COPY_COMPLETE_SOURCE, done: true });
    expect(dataLines(await reading)).toEqual(['[fetch] context fetched', '[gate] {"blocked":true}']);

    // No copier ever completes it (the leader is gone): the stream ends once the grace has passed.
    const orphan = await withJob();
    await moveBuild(deps, orphan.id, 'cancelled');
    const waiting = readEvents(buildLogEvents(deps, { buildId: orphan.id, copied: true, stillAllowed: async () => true, rules: { pollMs: 10 } }));
    deps.clock.advance(STREAM_RULES.copyGraceMs);
    expect(await waiting).toBe(': build log\n\n');
  });

  it('is served as text/event-stream to staff, 404 for an unknown build, 400 for a malformed Last-Event-ID', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const { external } = createTestApps(deps);
    const admin = await createUser(deps, { role: 'admin' });
    const { headers } = await signIn(deps, { userId: admin.id });
    const build = await newBuild(deps);
    await appendBuildLog(deps, build.id, ['hello']);
    await moveBuild(deps, build.id, 'cancelled');
    const res = await external.request(`/api/v1/images/build/${build.id}/logs`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(dataLines(await res.text())).toEqual(['hello']);
    expect((await external.request('/api/v1/images/build/00000000-0000-4000-8000-000000000000/logs', { headers })).status).toBe(404);
    const second = Math.floor(deps.clock.now().getTime() / 1000);
    const resumed = await external.request(`/api/v1/images/build/${build.id}/logs`, { headers: { ...headers, 'Last-Event-ID': `${second}.000000` } });
    expect([resumed.status, dataLines(await resumed.text())]).toEqual([200, []]);
    for (const id of ['nonsense', `${second}.1`, `${second}.0000000`, `${second};drop`]) {
      const bad = await external.request(`/api/v1/images/build/${build.id}/logs`, { headers: { ...headers, 'Last-Event-ID': id } });
      expect([bad.status, (await errorOf(bad)).code], id).toEqual([400, 'bad_request']);
    }
  });

  it('counts against the account’s event streams: 429 past the cap, a slot freed when a stream ends', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const { external } = createTestApps(deps);
    const admin = await createUser(deps, { role: 'admin' });
    const { headers } = await signIn(deps, { userId: admin.id });
    const build = await newBuild(deps);
    await moveBuild(deps, build.id, 'building');
    const open = () => external.request(`/api/v1/images/build/${build.id}/logs`, { headers });
    const streams = [];
    for (let i = 0; i < STREAMS_PER_ACCOUNT; i++) {
      const res = await open();
      expect(res.status).toBe(200);
      streams.push(res.body!.getReader());
    }
    const refused = await open();
    expect(refused.status).toBe(429);
    expect((await errorOf(refused)).code).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    await streams.pop()!.cancel();
    await vi.waitFor(async () => {
      const again = await open();
      await again.body?.cancel();
      expect(again.status).toBe(200);
    });
    await Promise.all(streams.map((reader) => reader.cancel()));
  });
});
