import { describe, expect, it, vi } from 'vitest';
import { createTestApps, errorOf, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { ExternalJobs, laneDeps } from '../../../test/helpers/lane-deps.js';
import { STREAMS_PER_ACCOUNT } from '../console/stream-slots.js';
import { buildLogEvents } from './log-stream.js';
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

  it('replays the log with unix-second ids, resumes from Last-Event-ID within the hour, and ends once the build is terminal', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const build = await newBuild(deps);
    await appendBuildLog(deps, build.id, ['one', 'two\nthree']);
    const second = Math.floor(deps.clock.now().getTime() / 1000);
    deps.clock.advance(5000);
    await appendBuildLog(deps, build.id, ['four']);
    await moveBuild(deps, build.id, 'building');
    await moveBuild(deps, build.id, 'failed', { error: 'x' });

    const all = await readEvents(buildLogEvents(deps, { buildId: build.id, stillAllowed: async () => true }));
    expect(dataLines(all)).toEqual(['one', 'two', 'three', 'four']);
    expect(all).toContain(`id: ${second}\ndata: one\n\n`);
    expect(all).toContain(`id: ${second + 5}\ndata: four\n\n`);

    const resumed = await readEvents(buildLogEvents(deps, { buildId: build.id, lastEventId: String(second + 5), stillAllowed: async () => true }));
    expect(dataLines(resumed)).toEqual(['four']);
    // Outside the resume window (or malformed), the whole log is sent again.
    deps.clock.advance(2 * 3600 * 1000);
    for (const lastEventId of [String(second + 5), 'nonsense']) {
      const stale = await readEvents(buildLogEvents(deps, { buildId: build.id, lastEventId, stillAllowed: async () => true }));
      expect(dataLines(stale)).toHaveLength(4);
    }
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

  it('is served as text/event-stream to staff, 404 for an unknown build', async () => {
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
