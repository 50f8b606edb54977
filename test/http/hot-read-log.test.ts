import { describe, expect, it } from 'vitest';
import { z } from '@hono/zod-openapi';
import { loadConfig } from '../../src/config.js';
import { HotReadSampler } from '../../src/http/access-log.js';
import { createRouter, defineRoute, errorAnswer, json } from '../../src/http/route.js';
import { DomainError } from '../../src/lib/errors.js';
import { bearer, createTestApp, createTestApps, createTestDeps, jsonRequest, TEST_ENV } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { addServer } from '../helpers/servers.js';
import { createUser, signIn } from '../helpers/sessions.js';

type Line = Record<string, unknown>;
const requestLines = (lines: Line[]) => lines.filter((l) => l.msg === 'request');
/** How many answers the lines stand for: a sampled line for `sampled` of them, any other for one. */
const answersOf = (lines: Line[]) => lines.reduce((sum, l) => sum + ((l.sampled as number | undefined) ?? 1), 0);

describe('the sampler of a hot read’s log lines', () => {
  it('writes the first line, then one per N answers, each saying how many answers it stands for', () => {
    const sampler = new HotReadSampler(4);
    const taken = Array.from({ length: 10 }, (_, i) => sampler.take(1000 + i)); // all within one second
    expect(taken).toEqual([1, 0, 0, 0, 4, 0, 0, 0, 4, 0]);
  });

  it('writes a line for an answer a second or more after the last line, however few came between', () => {
    const sampler = new HotReadSampler(100);
    expect(sampler.take(0)).toBe(1);
    expect(sampler.take(10)).toBe(0);
    expect(sampler.take(999)).toBe(0);
    expect(sampler.take(1000)).toBe(3);
    expect(sampler.take(5000)).toBe(1);
  });
});

describe('sampled request lines of the hot reads (LOG_HOT_READS_SAMPLE)', () => {
  const database = useTestDatabase();

  it('defaults to one line of 100 and refuses a rate below 1', () => {
    expect(loadConfig(TEST_ENV as NodeJS.ProcessEnv).logHotReadsSample).toBe(100);
    for (const value of ['0', '-1', '2.5', 'some']) {
      expect(() => loadConfig({ ...TEST_ENV, LOG_HOT_READS_SAMPLE: value } as NodeJS.ProcessEnv), value).toThrow(/LOG_HOT_READS_SAMPLE:/);
    }
  });

  it('samples by-host’s, status’s and healthz’s successful lines, counts every answer in the metrics, and logs every miss', async () => {
    const deps = createTestDeps(database(), { env: { LOG_HOT_READS_SAMPLE: '10' } });
    const { internal } = createTestApps(deps);
    const server = addServer(deps, { subdomain: 'sampled' });
    const paths = ['/api/v1/servers/by-host/sampled.felis.test', `/api/v1/internal/servers/${server.spec.name}/status`, '/healthz'];
    const started = performance.now();
    for (const path of paths) {
      for (let i = 0; i < 35; i++) expect((await internal.request(path, { headers: bearer('proxy') })).status, path).toBe(200);
    }
    const elapsedSeconds = (performance.now() - started) / 1000;
    for (const path of paths) {
      const lines = requestLines(deps.captured.lines()).filter((l) => l.path === path);
      // The first answer's line at once, then one per ten (or per second on a slow machine); an
      // answer over 100 ms (the first, while the cache lists, on a loaded machine) has its own.
      const slow = (l: Line) => l.sampled === undefined && (l.duration_ms as number) >= 100;
      expect(lines[0], path).toMatchObject({ status: 200, level: 'info' });
      expect(lines[0]!.sampled === 1 || slow(lines[0]!), path).toBe(true);
      expect(lines.every((l) => slow(l) || (typeof l.sampled === 'number' && l.sampled >= 1 && l.sampled <= 10)), path).toBe(true);
      expect(lines.filter((l) => !slow(l)).length, path).toBeLessThanOrEqual(4 + Math.ceil(elapsedSeconds));
      // What was left out is at most the answers since the last line (fewer than ten).
      expect(answersOf(lines), path).toBeGreaterThan(35 - 10);
      expect(answersOf(lines), path).toBeLessThanOrEqual(35);
    }
    const metrics = await deps.metrics.registry.metrics();
    expect(metrics).toContain('felis_http_requests_total{face="internal",method="GET",route="/api/v1/servers/by-host/:host",status="200"} 35');
    expect(metrics).toContain('felis_http_requests_total{face="internal",method="GET",route="/healthz",status="200"} 35');

    // Errors are never sampled: each miss, each refused token, each bad host leaves its line.
    const before = requestLines(deps.captured.lines()).length;
    for (let i = 0; i < 5; i++) {
      expect((await internal.request('/api/v1/servers/by-host/nowhere.felis.test', { headers: bearer('proxy') })).status).toBe(404);
      expect((await internal.request('/api/v1/servers/by-host/sampled.felis.test', { headers: bearer('ops') })).status).toBe(403);
      expect((await internal.request('/api/v1/servers/by-host/sampled.elsewhere.test', { headers: bearer('proxy') })).status).toBe(400);
      expect((await internal.request('/api/v1/internal/servers/nowhere/status', { headers: bearer('proxy') })).status).toBe(404);
    }
    const errors = requestLines(deps.captured.lines()).slice(before);
    expect(errors.map((l) => l.status)).toEqual(Array.from({ length: 5 }, () => [404, 403, 400, 404]).flat());
    expect(errors.every((l) => l.sampled === undefined)).toBe(true);
  });

  it('logs every line of a route that is no hot read, and every line of a hot read at LOG_HOT_READS_SAMPLE=1', async () => {
    const deps = createTestDeps(database(), { env: { LOG_HOT_READS_SAMPLE: '1' } });
    const { internal } = createTestApps(deps);
    addServer(deps, { subdomain: 'every' });
    for (let i = 0; i < 12; i++) expect((await internal.request('/api/v1/servers/by-host/every', { headers: bearer('proxy') })).status).toBe(200);
    for (let i = 0; i < 12; i++) expect((await internal.request('/api/v1/servers', { headers: bearer('proxy') })).status).toBe(200);
    const lines = requestLines(deps.captured.lines());
    expect(lines).toHaveLength(24);
    expect(lines.every((l) => l.sampled === undefined)).toBe(true);

    const sampledDeps = createTestDeps(database(), { env: { LOG_HOT_READS_SAMPLE: '50' } });
    const app = createTestApps(sampledDeps).internal;
    for (let i = 0; i < 12; i++) expect((await app.request('/api/v1/servers', { headers: bearer('proxy') })).status).toBe(200);
    expect(requestLines(sampledDeps.captured.lines())).toHaveLength(12);
  });

  it('logs every slow answer and every write of a hot read, sampling only the fast successful reads', async () => {
    const hot = { hotRead: true };
    const slow = defineRoute(
      { tier: 'public' },
      { method: 'get', path: '/t/hot/{ms}', request: { params: z.object({ ms: z.coerce.number().int().min(0).max(1000) }) }, responses: { 200: json(z.object({ ok: z.boolean() }), 'ok'), 409: errorAnswer('refused') } },
      hot,
    );
    const write = defineRoute(
      { tier: 'public' },
      { method: 'post', path: '/t/hot', request: { body: { content: { 'application/json': { schema: z.object({}).strict() } } } }, responses: { 200: json(z.object({ ok: z.boolean() }), 'ok') } },
      hot,
    );
    const routes = createRouter()
      .openapi(slow, async (c) => {
        const { ms } = c.req.valid('param');
        if (ms === 999) throw new DomainError('conflict', 'refused');
        if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
        return c.json({ ok: true }, 200);
      })
      .openapi(write, (c) => c.json({ ok: true }, 200));
    const deps = createTestDeps(database(), { env: { LOG_HOT_READS_SAMPLE: '1000' } });
    const app = createTestApp('internal', deps, routes);

    const started = performance.now();
    for (let i = 0; i < 5; i++) expect((await app.request('/t/hot/0')).status).toBe(200);
    // The first fast answer's line; the next ones within a second are left out.
    const fast = requestLines(deps.captured.lines()).filter((l) => l.sampled !== undefined);
    expect(fast[0]).toMatchObject({ path: '/t/hot/0', status: 200, sampled: 1 });
    expect(fast.length).toBeLessThanOrEqual(1 + Math.ceil((performance.now() - started) / 1000));
    const seen = requestLines(deps.captured.lines()).length;
    expect((await app.request('/t/hot/150')).status).toBe(200);
    expect((await app.request('/t/hot/999')).status).toBe(409);
    for (let i = 0; i < 3; i++) expect((await app.request('/t/hot', jsonRequest('POST', {}))).status).toBe(200);
    const [slowLine, refused, ...writes] = requestLines(deps.captured.lines()).slice(seen);
    expect(slowLine).toMatchObject({ path: '/t/hot/150', status: 200 });
    expect(slowLine!.duration_ms as number).toBeGreaterThanOrEqual(100);
    expect(slowLine).not.toHaveProperty('sampled');
    expect(refused).toMatchObject({ path: '/t/hot/999', status: 409 });
    expect(writes.map((l) => [l.method, l.status, l.sampled])).toEqual([['POST', 200, undefined], ['POST', 200, undefined], ['POST', 200, undefined]]);
  });

  it('samples a signed-in user’s successful reads as it does the hot reads, with the user in the lines written, and logs every refusal', async () => {
    const deps = createTestDeps(database(), { env: { LOG_HOT_READS_SAMPLE: '10' } });
    const { external } = createTestApps(deps);
    const user = await createUser(deps);
    const session = await signIn(deps, { userId: user.id });
    const started = performance.now();
    for (let i = 0; i < 35; i++) expect((await external.request('/api/v1/me', { headers: session.headers })).status).toBe(200);
    const elapsedSeconds = (performance.now() - started) / 1000;
    const lines = requestLines(deps.captured.lines()).filter((l) => l.path === '/api/v1/me');
    const slow = (l: Line) => l.sampled === undefined && (l.duration_ms as number) >= 100;
    expect(lines[0]).toMatchObject({ status: 200, user_id: user.id });
    expect(lines.every((l) => l.user_id === user.id && (slow(l) || (typeof l.sampled === 'number' && l.sampled >= 1 && l.sampled <= 10)))).toBe(true);
    expect(lines.filter((l) => !slow(l)).length).toBeLessThanOrEqual(4 + Math.ceil(elapsedSeconds));
    expect(answersOf(lines)).toBeGreaterThan(35 - 10);
    expect(answersOf(lines)).toBeLessThanOrEqual(35);

    // A refused read has no session: every one leaves its line.
    const before = requestLines(deps.captured.lines()).length;
    for (let i = 0; i < 3; i++) expect((await external.request('/api/v1/me', { headers: { Host: session.headers.Host! } })).status).toBe(401);
    const refused = requestLines(deps.captured.lines()).slice(before);
    expect(refused.map((l) => [l.status, l.sampled])).toEqual([[401, undefined], [401, undefined], [401, undefined]]);
  });
});
