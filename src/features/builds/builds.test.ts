import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { listImages } from '../images/service.js';
import { writeSetting } from '../servers/wakes/settings.js';
import { ExternalJobs, laneDeps } from '../../../test/helpers/lane-deps.js';
import type { BuildView } from './schema.js';

const fixture = (name: string): object => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as object;
const ID = '00000000-0000-4000-8000-000000000000';

async function setUp(deps: TestDeps) {
  const { external, internal } = createTestApps(deps);
  const admin = await createUser(deps, { role: 'admin' });
  const headers = (await signIn(deps, { userId: admin.id })).headers;
  const staff = (method: string, path: string, body?: unknown) =>
    external.request(`/api/v1${path}`, body === undefined ? { method, headers } : jsonRequest(method, body, headers));
  const job = (path: string, body: unknown) => internal.request(`/api/v1/internal/builds${path}`, jsonRequest('POST', body, bearer('build')));
  const create = async (imageRef = 'registry.felis.test/felis/paper:1') => {
    const res = await staff('POST', '/images/build', { image_ref: imageRef, dockerfile: 'FROM felis/paper:1.21\nCOPY plugins /data/plugins\n' });
    expect(res.status).toBe(202);
    return (await res.json()) as BuildView;
  };
  return { external, internal, admin, headers, staff, job, create };
}

describe('builds', () => {
  const database = useTestDatabase();

  it('creates a pending build handed to the runner, and refuses every illegal move', async () => {
    const jobs = new ExternalJobs();
    const deps = laneDeps(database(), jobs);
    const { staff, job, create, admin } = await setUp(deps);
    const build = await create();
    expect(build).toMatchObject({ status: 'pending', requested_by: admin.id, image_ref: 'registry.felis.test/felis/paper:1', job_name: expect.stringMatching(/^felis-build-/) });
    expect(build).not.toHaveProperty('finished_at');
    expect(jobs.started.map((j) => j.buildId)).toEqual([build.id]);

    const move = async (status: string, expected: number) => {
      const res = await job(`/${build.id}/status`, { status });
      expect(res.status, `${status}`).toBe(expected);
      if (expected === 409) expect((await errorOf(res)).code).toBe('conflict');
    };
    await move('succeeded', 409); // pending cannot succeed
    await move('building', 204);
    await move('building', 409); // no repeat
    await move('succeeded', 409); // not scanned: nothing may be pushed
    expect((await job(`/${build.id}/scan`, { report: fixture('trivy-modpack.json') })).status).toBe(200);
    // The gate blocked (log4shell, the AWS key): the build failed before any push.
    const failed = (await (await staff('GET', `/images/build/${build.id}`)).json()) as BuildView;
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('CVE-2021-44228'), finished_at: deps.clock.now().toISOString() });
    await move('succeeded', 409);
    await move('building', 409);
    await move('failed', 409);
    expect((await job(`/${build.id}/scan`, { report: fixture('trivy-clean.json') })).status).toBe(409);
    const cancel = await staff('POST', `/images/build/${build.id}/cancel`);
    expect(cancel.status).toBe(409);
    expect((await listImages(deps.database.db)).some((i) => i.build_id === build.id)).toBe(false);

    expect((await job(`/${ID}/status`, { status: 'building' })).status).toBe(404);
    expect((await job(`/not-a-uuid/status`, { status: 'building' })).status).toBe(404);
    expect((await job(`/${build.id}/status`, { status: 'cancelled' })).status).toBe(400);
    expect((await job(`/${build.id}/status`, { status: 'building', extra: 1 })).status).toBe(400);
  });

  it('cancels a pending or running build and stops its job; finished_at on the terminal move', async () => {
    const jobs = new ExternalJobs();
    const deps = laneDeps(database(), jobs);
    const { staff, job, create } = await setUp(deps);
    const pending = await create();
    deps.clock.advance(5000);
    const cancelled = await staff('POST', `/images/build/${pending.id}/cancel`);
    expect(cancelled.status).toBe(202);
    expect(await cancelled.json()).toMatchObject({ status: 'cancelled', finished_at: deps.clock.now().toISOString() });
    expect(jobs.cancelled).toEqual([pending.job_name]);
    expect((await job(`/${pending.id}/status`, { status: 'building' })).status).toBe(409);

    const running = await create();
    await job(`/${running.id}/status`, { status: 'building' });
    expect((await staff('POST', `/images/build/${running.id}/cancel`)).status).toBe(202);
    expect((await staff('POST', `/images/build/${ID}/cancel`)).status).toBe(404);
  });

  it('scans: keeps the documents unless too large (SBOM first, then the report), and a passing build whitelists its image', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const { staff, job, create } = await setUp(deps);
    const sbom = { bomFormat: 'CycloneDX', specVersion: '1.5', components: Array.from({ length: 50 }, (_, i) => ({ type: 'library', name: `lib${i}` })) };
    const report = fixture('trivy-clean.json');
    const reportBytes = Buffer.byteLength(JSON.stringify(report));
    await writeSetting(deps.database.db, 'scan_keep_max_bytes', reportBytes + 10, deps.clock.now());

    const build = await create('registry.felis.test/felis/clean:1');
    await job(`/${build.id}/status`, { status: 'building' });
    expect((await staff('GET', `/images/build/${build.id}/scan`)).status).toBe(404);
    const res = await job(`/${build.id}/scan`, { report, sbom });
    expect(await res.json()).toMatchObject({ blocked: false, omitted: ['sbom'] });
    expect(await (await staff('GET', `/images/build/${build.id}/scan`)).json()).toMatchObject({ has_report: true, has_sbom: false });
    expect((await staff('GET', `/images/build/${build.id}/sbom`)).status).toBe(404);
    expect(await (await staff('GET', `/images/build/${build.id}/scan/report`)).json()).toEqual(report);
    expect((await job(`/${build.id}/status`, { status: 'succeeded' })).status).toBe(204);
    const image = (await listImages(deps.database.db)).find((i) => i.image_ref === 'registry.felis.test/felis/clean:1');
    expect(image).toMatchObject({ source: 'build', build_id: build.id, enabled: true });

    await writeSetting(deps.database.db, 'scan_keep_max_bytes', 10, deps.clock.now());
    const second = await create('registry.felis.test/felis/clean:2');
    await job(`/${second.id}/status`, { status: 'building' });
    expect(await (await job(`/${second.id}/scan`, { report, sbom })).json()).toMatchObject({ omitted: ['sbom', 'report'] });
    expect((await staff('GET', `/images/build/${second.id}/scan/report`)).status).toBe(404);

    // The policy comes from the registry settings.
    await writeSetting(deps.database.db, 'scan_fail_on', ['CRITICAL', 'HIGH'], deps.clock.now());
    await writeSetting(deps.database.db, 'scan_accept', ['CVE-2021-44228', 'aws-access-key-id'], deps.clock.now());
    const third = await create('registry.felis.test/felis/risky:1');
    await job(`/${third.id}/status`, { status: 'building' });
    const verdict = (await (await job(`/${third.id}/scan`, { report: fixture('trivy-modpack.json') })).json()) as Record<string, unknown>;
    expect(verdict).toMatchObject({ blocked: true, blocking_counts: { HIGH: 3 }, policy: { fail_on: ['CRITICAL', 'HIGH'], fail_unfixed: false, accept: ['CVE-2021-44228', 'aws-access-key-id'] } });
    expect((await job(`/${third.id}/scan`, { report: { SchemaVersion: 1 } })).status).toBe(409);
    const fourth = await create('registry.felis.test/felis/x:1');
    await job(`/${fourth.id}/status`, { status: 'building' });
    const bad = await job(`/${fourth.id}/scan`, { report: { SchemaVersion: 1 } });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toMatch(/Trivy/);
  });

  it('lists newest first with paging and a search, and validates its input', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const { staff, create } = await setUp(deps);
    const made: BuildView[] = [];
    for (let i = 0; i < 3; i++) {
      deps.clock.advance(1000);
      made.push(await create(`registry.felis.test/paging/app${i}:1`));
    }
    const page = (await (await staff('GET', '/images/build?query=paging/&limit=2&offset=0')).json()) as { builds: BuildView[]; total: number };
    expect(page.total).toBe(3);
    expect(page.builds.map((b) => b.id)).toEqual([made[2]!.id, made[1]!.id]);
    const next = (await (await staff('GET', '/images/build?query=paging/&limit=2&offset=2')).json()) as { builds: BuildView[] };
    expect(next.builds.map((b) => b.id)).toEqual([made[0]!.id]);
    expect(((await (await staff('GET', '/images/build?query=%25')).json()) as { total: number }).total).toBe(0);
    expect((await staff('GET', '/images/build?limit=500')).status).toBe(400);
    expect((await staff('GET', `/images/build/${ID}`)).status).toBe(404);

    expect((await staff('POST', '/images/build', { image_ref: 'registry.felis.test/a:1' })).status).toBe(400);
    expect((await staff('POST', '/images/build', { image_ref: 'has space:1', dockerfile: 'FROM x' })).status).toBe(400);
    expect((await staff('POST', '/images/build', { image_ref: 'registry.felis.test/a:1', context_ref: `submissions/${ID}` })).status).toBe(400);
    expect((await staff('POST', '/images/build', { image_ref: 'registry.felis.test/a:1', dockerfile: 'FROM x', unknown: 1 })).status).toBe(400);
  });

  it('answers 503 when no builder is configured, and fails a build the builder refused', async () => {
    const jobs = new ExternalJobs();
    const deps = laneDeps(database(), jobs);
    const { staff } = await setUp(deps);
    jobs.refuse = true;
    const refused = await staff('POST', '/images/build', { image_ref: 'registry.felis.test/refused:1', dockerfile: 'FROM x' });
    expect(refused.status).toBe(503);
    const list = (await (await staff('GET', '/images/build?query=refused')).json()) as { builds: BuildView[] };
    expect(list.builds[0]).toMatchObject({ status: 'failed', error: 'the build could not be handed to the builder' });
    expect(deps.captured.lines().some((l) => l.msg === 'build hand-off failed')).toBe(true);

    const bare = laneDeps(database(), jobs);
    delete (bare as { buildRunner?: unknown }).buildRunner;
    const { staff: staffBare } = await setUp(bare);
    expect((await staffBare('POST', '/images/build', { image_ref: 'registry.felis.test/a:1', dockerfile: 'FROM x' })).status).toBe(503);
  });

  it('removes an image from the whitelist with DELETE /images?ref=', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const { staff } = await setUp(deps);
    expect((await staff('POST', '/images', { image_ref: 'docker.io/library/alpine:3.20' })).status).toBe(201);
    const removed = await staff('DELETE', `/images?ref=${encodeURIComponent('docker.io/library/alpine:3.20')}`);
    expect(removed.status).toBe(204);
    expect((await staff('DELETE', `/images?ref=${encodeURIComponent('docker.io/library/alpine:3.20')}`)).status).toBe(404);
    expect((await staff('DELETE', '/images')).status).toBe(400);
    expect((await staff('DELETE', '/images?ref=not%20an%20image')).status).toBe(400);
  });

  it('serves each route on its face and tier only', async () => {
    const deps = laneDeps(database(), new ExternalJobs());
    const { external, internal } = createTestApps(deps);
    const admin = { tier: 'admin' } as const;
    const app = { tier: 'app' } as const;
    const build = { tier: 'service', callers: ['build'] } as const;
    await expectTierMatrix(external, [
      { method: 'POST', path: '/api/v1/images/build', access: admin },
      { method: 'GET', path: '/api/v1/images/build', access: admin },
      { method: 'GET', path: `/api/v1/images/build/${ID}`, access: admin },
      { method: 'POST', path: `/api/v1/images/build/${ID}/cancel`, access: admin },
      { method: 'GET', path: `/api/v1/images/build/${ID}/logs`, access: admin },
      { method: 'GET', path: `/api/v1/images/build/${ID}/scan`, access: admin },
      { method: 'GET', path: `/api/v1/images/build/${ID}/scan/report`, access: admin },
      { method: 'GET', path: `/api/v1/images/build/${ID}/sbom`, access: admin },
      { method: 'DELETE', path: '/api/v1/images?ref=a', access: admin },
      { method: 'POST', path: '/api/v1/me/submissions', access: app },
      { method: 'GET', path: '/api/v1/me/submissions', access: app },
      { method: 'GET', path: '/api/v1/me/submissions/limits', access: app },
      { method: 'GET', path: `/api/v1/me/submissions/${ID}`, access: app },
      { method: 'DELETE', path: `/api/v1/me/submissions/${ID}`, access: app },
      { method: 'POST', path: `/api/v1/me/submissions/${ID}/context`, access: app },
      { method: 'GET', path: `/api/v1/me/submissions/${ID}/context/upload`, access: app },
      { method: 'PUT', path: `/api/v1/me/submissions/${ID}/context/upload?offset=0`, access: app },
      { method: 'POST', path: `/api/v1/me/submissions/${ID}/context/upload/complete`, access: app },
      { method: 'GET', path: '/api/v1/submissions', access: admin },
      { method: 'POST', path: `/api/v1/submissions/${ID}/approve`, access: admin },
      { method: 'POST', path: `/api/v1/submissions/${ID}/reject`, access: admin },
      { method: 'DELETE', path: `/api/v1/submissions/${ID}`, access: admin },
      { method: 'GET', path: `/api/v1/submissions/${ID}/context`, access: admin },
    ]);
    await expectTierMatrix(internal, [
      { method: 'GET', path: `/api/v1/internal/submissions/${ID}/context`, access: build },
      { method: 'GET', path: `/api/v1/internal/builds/${ID}/context`, access: build },
      { method: 'POST', path: `/api/v1/internal/builds/${ID}/status`, access: build },
      { method: 'POST', path: `/api/v1/internal/builds/${ID}/scan`, access: build },
    ]);
    // Neither face serves the other's routes.
    expect((await internal.request('/api/v1/images/build')).status).toBe(404);
    expect((await external.request(`/api/v1/internal/builds/${ID}/status`, { method: 'POST' })).status).toBe(404);
    // A player is refused on the admin routes.
    const player = await createUser(deps);
    const playerHeaders = (await signIn(deps, { userId: player.id, host: deps.config.consoleHost })).headers;
    expect((await external.request('/api/v1/images/build', { headers: playerHeaders })).status).toBe(403);
    const docs = (await (await internal.request('/openapi/external.json')).json()) as { paths: Record<string, object> };
    for (const path of ['/api/v1/images/build/{id}/logs', '/api/v1/me/submissions/{id}/context/upload', '/api/v1/submissions/{id}/approve']) {
      expect(docs.paths).toHaveProperty([path]);
    }
    const internalDocs = (await (await internal.request('/openapi/internal.json')).json()) as { paths: Record<string, object> };
    expect(internalDocs.paths).toHaveProperty(['/api/v1/internal/builds/{id}/scan']);
  });
});
