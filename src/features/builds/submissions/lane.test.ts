import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, errorOf, jsonRequest } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { createUser, signIn } from '../../../../test/helpers/sessions.js';
import type { TestDeps } from '../../../../test/helpers/app.js';
import { listImages } from '../../images/service.js';
import { writeSetting } from '../../servers/wakes/settings.js';
import { readFileSync } from 'node:fs';
import { cleanModpack, contentDigest, riskyModpack, sha256Hex } from './fixtures/contexts.js';
import { ExternalJobs, laneDeps } from '../../../../test/helpers/lane-deps.js';
import type { SubmissionView } from './schema.js';
import type { SimulatedBuildRunner } from '../simulated-runner.js';

async function people(deps: TestDeps) {
  const player = await createUser(deps);
  const admin = await createUser(deps, { role: 'admin' });
  return {
    player: { id: player.id, headers: (await signIn(deps, { userId: player.id })).headers },
    admin: { id: admin.id, headers: (await signIn(deps, { userId: admin.id })).headers },
  };
}

function client(app: { request(path: string, init?: RequestInit): Response | Promise<Response> }, headers: Record<string, string>) {
  return {
    json: (method: string, path: string, body?: unknown) =>
      app.request(`/api/v1${path}`, body === undefined ? { method, headers } : jsonRequest(method, body, headers)),
    raw: (method: string, path: string, bytes: Buffer, extra: Record<string, string> = {}) =>
      app.request(`/api/v1${path}`, {
        method,
        headers: { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(bytes.length), ...extra },
        body: new Uint8Array(bytes),
      }),
  };
}

const trivyFixture = JSON.parse(readFileSync(new URL('../fixtures/trivy-clean.json', import.meta.url), 'utf8')) as object;

describe('the submission lane', () => {
  const database = useTestDatabase();

  it('uploads a context in parts: wrong offset, wrong digest, a part and a total over the limit, then resumes', async () => {
    const deps = laneDeps(database());
    const { external } = createTestApps(deps);
    const { player } = await people(deps);
    const me = client(external, player.headers);
    await writeSetting(deps.database.db, 'part_max_bytes', 1024, deps.clock.now());
    await writeSetting(deps.database.db, 'context_max_bytes', 64 * 1024, deps.clock.now());
    const context = await cleanModpack();
    expect(context.length).toBeGreaterThan(2048);

    const created = await me.json('POST', '/me/submissions', { display_name: 'Skyblock Plus' });
    expect(created.status).toBe(201);
    const submission = (await created.json()) as SubmissionView;
    expect(submission).toMatchObject({ display_name: 'Skyblock Plus', status: 'pending_review', submitted_by: player.id, context_ref: `submissions/${submission.id}` });
    expect(submission).not.toHaveProperty('context_sha256');
    const base = `/me/submissions/${submission.id}/context/upload`;
    expect(await (await me.json('GET', base)).json()).toEqual({ received: 0, part_max_bytes: 1024, max_context_bytes: 65536 });

    const first = context.subarray(0, 1024);
    const put = (offset: number, bytes: Buffer, digest = contentDigest(bytes), extra: Record<string, string> = {}) =>
      me.raw('PUT', `${base}?offset=${offset}`, bytes, { 'Content-Digest': digest, ...extra });
    const ok = await put(0, first);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ received: 1024, part_max_bytes: 1024, max_context_bytes: 65536 });

    const second = context.subarray(1024, 2048);
    const wrongOffset = await put(512, second);
    expect(wrongOffset.status).toBe(409);
    expect((await errorOf(wrongOffset)).code).toBe('upload_offset_mismatch');
    const wrongDigest = await put(1024, second, contentDigest(first));
    expect(wrongDigest.status).toBe(400);
    expect((await errorOf(wrongDigest)).code).toBe('digest_mismatch');
    const overPart = await put(1024, context.subarray(1024, 2049));
    expect(overPart.status).toBe(413);
    expect((await errorOf(overPart)).code).toBe('too_large');
    // A chunked part (no Content-Length) over the limit is counted on its bytes.
    const chunked = await external.request(`/api/v1${base}?offset=1024`, {
      method: 'PUT',
      headers: { ...player.headers, 'Content-Type': 'application/gzip', 'Content-Digest': contentDigest(context.subarray(1024, 3000)) },
      body: new Blob([new Uint8Array(context.subarray(1024, 3000))]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    await writeSetting(deps.database.db, 'context_max_bytes', 1500, deps.clock.now());
    const overTotal = await put(1024, second);
    expect(overTotal.status).toBe(413);
    await writeSetting(deps.database.db, 'context_max_bytes', 64 * 1024, deps.clock.now());
    const noDigest = await me.raw('PUT', `${base}?offset=1024`, second);
    expect((await errorOf(noDigest)).code).toBe('bad_request');
    const wrongType = await put(1024, second, contentDigest(second), { 'Content-Type': 'application/json' });
    expect(wrongType.status).toBe(415);
    // Nothing above moved the staged length: the upload resumes where it stood.
    expect(await (await me.json('GET', base)).json()).toMatchObject({ received: 1024 });
    expect(await deps.contextStore.stagedBytes(submission.id)).toBe(1024);

    let offset = 1024;
    while (offset < context.length) {
      const bytes = context.subarray(offset, offset + 1024);
      const res = await put(offset, bytes);
      expect(res.status).toBe(200);
      offset = ((await res.json()) as { received: number }).received;
    }
    const done = await me.json('POST', `${base}/complete`);
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ id: submission.id, context_sha256: sha256Hex(context) });
    expect(await (await me.json('GET', base)).json()).toMatchObject({ received: 0 });
    expect((await me.json('POST', `${base}/complete`)).status).toBe(400);
  });

  it('runs end to end with the build caller: approve names the digest, the job fetches the context, scans and succeeds', async () => {
    const jobs = new ExternalJobs();
    const deps = laneDeps(database(), jobs);
    const { external, internal } = createTestApps(deps);
    const { player, admin } = await people(deps);
    const me = client(external, player.headers);
    const staff = client(external, admin.headers);
    const context = await cleanModpack();

    const { id } = (await (await me.json('POST', '/me/submissions', { display_name: 'Vanilla+' })).json()) as SubmissionView;
    const uploaded = await me.raw('POST', `/me/submissions/${id}/context`, context, { 'Content-Type': 'application/gzip' });
    expect(uploaded.status).toBe(200);
    const digest = sha256Hex(context);
    expect(((await uploaded.json()) as SubmissionView).context_sha256).toBe(digest);

    // The admin downloads exactly what was uploaded, with its digest.
    const download = await staff.json('GET', `/submissions/${id}/context`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    expect(download.headers.get('x-felis-context-sha256')).toBe(digest);
    expect(Buffer.from(await download.arrayBuffer()).equals(context)).toBe(true);
    // A player cannot use the admin door.
    expect((await me.json('GET', `/submissions/${id}/context`)).status).toBe(403);

    const mismatch = await staff.json('POST', `/submissions/${id}/approve`, { expected_digest: sha256Hex(Buffer.from('other')) });
    expect(mismatch.status).toBe(409);
    const approved = await staff.json('POST', `/submissions/${id}/approve`, { expected_digest: digest });
    expect(approved.status).toBe(200);
    const view = (await approved.json()) as SubmissionView;
    expect(view).toMatchObject({ status: 'approved', reviewed_by: admin.id, build_status: 'pending' });
    expect(view.image_ref).toBe(`registry.felis.local/felis/modpacks/sub-${id.slice(0, 8)}:${digest.slice(0, 12)}`);
    expect(view.build_id).toBeDefined();
    expect(jobs.started).toEqual([
      { buildId: view.build_id, imageRef: view.image_ref, contextRef: `submissions/${id}`, contextDigest: digest },
    ]);
    expect((await staff.json('POST', `/submissions/${id}/approve`, { expected_digest: digest })).status).toBe(409);

    // The job, with the build caller's token.
    const job = (method: string, path: string, body?: unknown) =>
      internal.request(`/api/v1/internal${path}`, body === undefined ? { method, headers: bearer('build') } : jsonRequest(method, body, bearer('build')));
    const fetched = await job('GET', `/submissions/${id}/context`);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(context)).toBe(true);
    const pinned = await job('GET', `/builds/${view.build_id}/context`);
    expect(Buffer.from(await pinned.arrayBuffer()).equals(context)).toBe(true);
    expect((await internal.request(`/api/v1/internal/submissions/${id}/context`, { headers: bearer('proxy') })).status).toBe(403);

    expect((await job('POST', `/builds/${view.build_id}/status`, { status: 'succeeded' })).status).toBe(409);
    expect((await job('POST', `/builds/${view.build_id}/status`, { status: 'building' })).status).toBe(204);
    const scanned = await job('POST', `/builds/${view.build_id}/scan`, { report: trivyFixture, sbom: { bomFormat: 'CycloneDX', specVersion: '1.5', components: [] } });
    expect(scanned.status).toBe(200);
    expect(await scanned.json()).toMatchObject({ blocked: false, packages: 2, counts: {}, blocking_counts: {} });
    expect((await job('POST', `/builds/${view.build_id}/status`, { status: 'succeeded', log_ref: 'pod-log' })).status).toBe(204);

    const build = await (await staff.json('GET', `/images/build/${view.build_id}`)).json();
    expect(build).toMatchObject({ status: 'succeeded', log_ref: 'pod-log', finished_at: deps.clock.now().toISOString() });
    const images = await listImages(deps.database.db);
    expect(images.find((i) => i.image_ref === view.image_ref)).toMatchObject({ source: 'build', build_id: view.build_id, enabled: true });

    const page = (await (await me.json('GET', '/me/submissions')).json()) as { submissions: SubmissionView[]; total: number; counts: object };
    expect(page.total).toBe(1);
    expect(page.counts).toEqual({ pending_review: 0, approved: 1, rejected: 0 });
    expect(page.submissions[0]).toMatchObject({ id, build_status: 'succeeded' });
    // Withdrawing is for a submission still pending review.
    expect((await me.json('DELETE', `/me/submissions/${id}`)).status).toBe(409);
  });

  it('the simulated builder blocks a risky pack at the scan gate and passes a clean one to the whitelist', async () => {
    const deps = laneDeps(database());
    const { external } = createTestApps(deps);
    const { player, admin } = await people(deps);
    const me = client(external, player.headers);
    const staff = client(external, admin.headers);
    const runner = deps.buildRunner as SimulatedBuildRunner;

    const submitAndApprove = async (name: string, context: Buffer) => {
      const { id } = (await (await me.json('POST', '/me/submissions', { display_name: name })).json()) as SubmissionView;
      await me.raw('POST', `/me/submissions/${id}/context`, context);
      const approved = (await (await staff.json('POST', `/submissions/${id}/approve`, { expected_digest: sha256Hex(context) })).json()) as SubmissionView;
      await runner.idle();
      return (await (await staff.json('GET', `/images/build/${approved.build_id}`)).json()) as { id: string; status: string; error?: string };
    };

    const risky = await submitAndApprove('Risky', await riskyModpack());
    expect(risky.status).toBe('failed');
    expect(risky.error).toBe('the scan blocked the image: 2 CRITICAL (CVE-2021-44228, aws-access-key-id)');
    const scan = await (await staff.json('GET', `/images/build/${risky.id}/scan`)).json();
    expect(scan).toMatchObject({ build_id: risky.id, has_report: true, has_sbom: true, summary: { blocked: true, blocking_counts: { CRITICAL: 2 } } });
    const report = (await (await staff.json('GET', `/images/build/${risky.id}/scan/report`)).json()) as { SchemaVersion: number };
    expect(report.SchemaVersion).toBe(2);
    const sbom = (await (await staff.json('GET', `/images/build/${risky.id}/sbom`)).json()) as { bomFormat: string };
    expect(sbom.bomFormat).toBe('CycloneDX');

    const clean = await submitAndApprove('Clean', await cleanModpack());
    expect(clean.status).toBe('succeeded');
    const images = await listImages(deps.database.db);
    expect(images.filter((i) => i.build_id === clean.id || i.build_id === risky.id).map((i) => i.build_id)).toEqual([clean.id]);

    const log = await staff.json('GET', `/images/build/${clean.id}/logs`);
    expect(log.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await log.text();
    expect(text).toContain('data: STEP 1/3: FROM itzg/minecraft-server:java21\n');
    expect(text).toContain('data: pushed\n');
    expect(text).toMatch(/^id: \d+\.\d{6}$/m);
  });

  it('rejects with a reason, lets a pending one be withdrawn, and hides other users’ submissions', async () => {
    const deps = laneDeps(database());
    const { external } = createTestApps(deps);
    const { player, admin } = await people(deps);
    const other = await createUser(deps);
    const stranger = client(external, (await signIn(deps, { userId: other.id })).headers);
    const me = client(external, player.headers);
    const staff = client(external, admin.headers);

    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      deps.clock.advance(1000);
      ids.push(((await (await me.json('POST', '/me/submissions', { display_name: name })).json()) as SubmissionView).id);
    }
    expect((await stranger.json('GET', `/me/submissions/${ids[0]}`)).status).toBe(404);
    expect((await stranger.json('DELETE', `/me/submissions/${ids[0]}`)).status).toBe(404);
    expect((await stranger.raw('POST', `/me/submissions/${ids[0]}/context`, Buffer.from('x'))).status).toBe(404);

    expect((await staff.json('POST', `/submissions/${ids[0]}/reject`, {})).status).toBe(400);
    const rejected = await staff.json('POST', `/submissions/${ids[0]}/reject`, { reason: 'Bundles a cracked launcher' });
    expect(await rejected.json()).toMatchObject({ status: 'rejected', reject_reason: 'Bundles a cracked launcher', reviewed_by: admin.id });
    expect((await staff.json('POST', `/submissions/${ids[0]}/reject`, { reason: 'again' })).status).toBe(409);
    // Approving a submission without a context is refused.
    expect((await staff.json('POST', `/submissions/${ids[1]}/approve`, { expected_digest: 'a'.repeat(64) })).status).toBe(409);

    const withdrawn = await me.json('DELETE', `/me/submissions/${ids[1]}`);
    expect(withdrawn.status).toBe(200);
    expect((await me.json('GET', `/me/submissions/${ids[1]}`)).status).toBe(404);

    const page = await (await me.json('GET', '/me/submissions?limit=1&offset=0')).json();
    expect(page).toMatchObject({ total: 2, counts: { pending_review: 1, approved: 0, rejected: 1 } });
    expect((page as { submissions: SubmissionView[] }).submissions.map((s) => s.display_name)).toEqual(['three']);
    const filtered = await (await staff.json('GET', '/submissions?status=rejected')).json();
    expect(filtered).toMatchObject({ total: 1, submissions: [{ id: ids[0] }] });
    const searched = await (await staff.json('GET', '/submissions?query=thr')).json();
    expect((searched as { submissions: SubmissionView[] }).submissions.map((s) => s.id)).toEqual([ids[2]]);
    expect((await me.json('GET', '/me/submissions?limit=0')).status).toBe(400);
    expect((await me.json('GET', '/me/submissions?status=bogus')).status).toBe(400);
    await writeSetting(deps.database.db, 'context_max_bytes', 123456, deps.clock.now());
    expect(await (await me.json('GET', '/me/submissions/limits')).json()).toEqual({ max_context_bytes: 123456 });

    const removed = await staff.json('DELETE', `/submissions/${ids[0]}`);
    expect(removed.status).toBe(200);
    expect((await staff.json('DELETE', `/submissions/${ids[0]}`)).status).toBe(404);
    expect((await me.json('POST', '/me/submissions', { display_name: 'x', image_ref: 'evil' })).status).toBe(400);
    expect((await me.json('POST', '/me/submissions', { display_name: 'bad\u0007name' })).status).toBe(400);
  });
});
