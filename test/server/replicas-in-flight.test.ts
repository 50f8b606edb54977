import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3BackupStore } from '../../src/adapters/backup-store/s3.js';
import { startS3rver, type S3rverProcess } from '../../src/adapters/backup-store/s3rver-process.js';
import { SimulatedWorldFolders } from '../../src/adapters/cluster/simulated-worlds.js';
import type { ClusterAdapter } from '../../src/adapters/cluster/types.js';
import { ObjectContextStore } from '../../src/features/builds/submissions/context-store.js';
import { SimulatedBuildRunner } from '../../src/features/builds/simulated-runner.js';
import { writeSetting } from '../../src/features/servers/wakes/settings.js';
import { JobTracker } from '../../src/features/worlds/volumes/runtime.js';
import { stagedObjects } from '../../src/features/worlds/uploads/sessions.js';
import { hashStream } from '../../src/features/worlds/volumes/archive.js';
import { lockSweep } from '../../src/features/worlds/housekeeping.js';
import { LOCK_LEASE_MS } from '../../src/features/worlds/jobs/lock.js';
import { recordJob } from '../../src/features/worlds/jobs/records.js';
import { leases } from '../../src/db/schema/coordination.js';
import { worldExports, worldJobs } from '../../src/db/schema/worlds.js';
import { eq } from 'drizzle-orm';
import { cleanModpack, contentDigest } from '../../src/features/builds/submissions/fixtures/contexts.js';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { addServer } from '../helpers/servers.js';
import { createUser, signIn } from '../helpers/sessions.js';
import { claimFor, useTempDir, worldMember } from '../helpers/worlds.js';

/**
 * Bytes in flight across replicas: two service instances on one database and one S3 server
 * process, each with its own S3 client (as two processes have), sharing only what replicas share
 * (the database, the bucket, the cluster and its world volumes). Every part, commit, status and
 * download goes to whichever instance the test picks, alternating: none of it may matter.
 */
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('bytes in flight on the shared store, parts spread over two replicas', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir('felis-replicas-');
  let s3: S3rverProcess;
  beforeAll(async () => {
    s3 = await startS3rver(tempDir());
  });
  afterAll(async () => {
    await s3?.stop();
  });

  const s3Store = (prefix: string) =>
    new S3BackupStore({ endpoint: s3.endpoint, region: 'us-east-1', bucket: s3.bucket, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix });

  /** Two replicas: their own stores' clients, job trackers and DATA_DIRs; one database, bucket, cluster and volume folder. */
  function twoReplicas(): [TestDeps, TestDeps] {
    const volumes = tempDir();
    const make = (cluster?: ClusterAdapter) => {
      const staging = s3Store('staging/');
      return createTestDeps(database(), {
        env: { DATA_DIR: tempDir() },
        overrides: {
          ...(cluster ? { cluster } : {}),
          staging,
          contextStore: new ObjectContextStore(staging),
          worlds: { store: s3Store(''), folders: new SimulatedWorldFolders(join(volumes, 'worlds')), jobs: new JobTracker() },
        },
      });
    };
    const a = make();
    const b = make(a.cluster);
    b.buildRunner = new SimulatedBuildRunner({ clock: b.clock });
    a.buildRunner = new SimulatedBuildRunner({ clock: a.clock });
    return [a, b];
  }

  it('a world upload: parts, status and commit each on another replica; the file lands whole and nothing stays staged', async () => {
    const [a, b] = twoReplicas();
    await writeSetting(a.database.db, 'part_max_bytes', 64 * 1024, a.clock.now());
    const owner = await worldMember(a);
    const { name } = addServer(a).spec;
    await claimFor(a, name, owner.id);
    const folder = await a.worlds.folders!.folder(name);
    mkdirSync(join(folder, 'world'));
    const apps = [createTestApps(a).external, createTestApps(b).external];
    const uploads = `/api/v1/servers/${name}/files/uploads`;
    const file = randomBytes(64 * 1024 * 3 + 777);

    const begun = await apps[0]!.request(`${uploads}?path=world%2Fbig.bin`, jsonRequest('POST', { size: file.length }, owner.headers));
    expect(begun.status).toBe(201);
    const { id } = (await begun.json()) as { id: string };
    let offset = 0;
    for (let i = 0; offset < file.length; i++) {
      const part = file.subarray(offset, offset + 64 * 1024);
      const app = apps[(i + 1) % 2]!;
      // The replica that takes this part did not take the last one, nor (for the first) the begin.
      const res = await app.request(`${uploads}/${id}?offset=${offset}`, {
        method: 'PUT',
        headers: { ...owner.headers, 'Content-Type': 'application/octet-stream', 'Content-Digest': `sha-256=:${createHash('sha256').update(part).digest('base64')}:` },
        body: new Uint8Array(part),
      });
      expect(res.status, `part ${i} on replica ${(i + 1) % 2}`).toBe(200);
      offset += part.length;
      const status = (await (await apps[i % 2]!.request(`${uploads}/${id}`, { headers: owner.headers })).json()) as { received: number };
      expect(status.received).toBe(offset);
    }
    // A part offered again at an old offset to the other replica is refused with where it stands.
    const late = await apps[0]!.request(`${uploads}/${id}?offset=0`, { method: 'PUT', headers: { ...owner.headers, 'Content-Type': 'application/octet-stream' }, body: new Uint8Array(file.subarray(0, 10)) });
    expect((await errorOf(late)).code).toBe('upload_offset_mismatch');
    expect((await stagedObjects(a, id)).map((o) => o.size)).toEqual([65536, 65536, 65536, 777]);

    const committed = await apps[1]!.request(`${uploads}/${id}/commit`, jsonRequest('POST', {}, owner.headers));
    expect(committed.status).toBe(202);
    await b.worlds.jobs.idle();
    expect(sha(readFileSync(join(folder, 'world', 'big.bin')))).toBe(sha(file));
    expect(await stagedObjects(a, id)).toEqual([]);
    const gone = await apps[0]!.request(`${uploads}/${id}`, { headers: owner.headers });
    expect((await errorOf(gone)).code).toBe('upload_not_found');
  });

  it('a submission context: parts on alternating replicas, completed on the other; every byte is in the stored context', async () => {
    const [a, b] = twoReplicas();
    await writeSetting(a.database.db, 'part_max_bytes', 1024, a.clock.now());
    await writeSetting(a.database.db, 'context_max_bytes', 64 * 1024, a.clock.now());
    const player = await createUser(a);
    const headers = (await signIn(a, { userId: player.id })).headers;
    const apps = [createTestApps(a).external, createTestApps(b).external];
    const context = await cleanModpack();
    expect(context.length).toBeGreaterThan(3 * 1024);

    const created = await apps[0]!.request('/api/v1/me/submissions', jsonRequest('POST', { display_name: 'Across replicas' }, headers));
    const { id } = (await created.json()) as { id: string };
    const base = `/api/v1/me/submissions/${id}/context/upload`;
    let offset = 0;
    for (let i = 0; offset < context.length; i++) {
      const part = context.subarray(offset, offset + 1024);
      const res = await apps[(i + 1) % 2]!.request(`${base}?offset=${offset}`, {
        method: 'PUT',
        headers: { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(part.length), 'Content-Digest': contentDigest(part) },
        body: new Uint8Array(part),
      });
      expect(res.status, `part ${i}`).toBe(200);
      offset += part.length;
    }
    expect(await b.contextStore!.stagedBytes(id)).toBe(context.length);
    // Completed on the replica that took the first part: the case, where the parts the
    // other replica took were lost and part 1 alone was stored under its sha-256.
    const done = await apps[1]!.request(`${base}/complete`, { method: 'POST', headers });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ context_sha256: sha(context) });
    expect(await hashStream((await a.contextStore!.open(id))!)).toEqual({ sha256: sha(context), bytes: context.length });
    expect(await a.contextStore!.stagedBytes(id)).toBe(0);
  });

  it('an export made on one replica is downloaded from the other, once', async () => {
    const [a, b] = twoReplicas();
    const owner = await worldMember(a);
    const { name } = addServer(a).spec;
    await claimFor(a, name, owner.id);
    const folder = await a.worlds.folders!.folder(name);
    mkdirSync(join(folder, 'world'));
    const apps = [createTestApps(a).external, createTestApps(b).external];
    const made = await apps[0]!.request(`/api/v1/servers/${name}/world/export`, { method: 'POST', headers: owner.headers });
    expect(made.status).toBe(202);
    const { ticket } = (await made.json()) as { ticket: string };
    await a.worlds.jobs.idle();
    expect(await (await apps[1]!.request(`/api/v1/exports/${ticket}`, { headers: owner.headers })).json()).toEqual({ state: 'ready' });
    const download = await apps[1]!.request(`/api/v1/exports/${ticket}/download`, { headers: owner.headers });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const again = await apps[0]!.request(`/api/v1/exports/${ticket}/download`, { headers: owner.headers });
    expect((await errorOf(again)).code).toBe('export_expired');
  });

  it("an export under way on a replica that was killed: the survivor's lock sweep fails its ticket instead of leaving it pending for good", async () => {
    const [a, b] = twoReplicas();
    const owner = await worldMember(a);
    const { name } = addServer(a).spec;
    await claimFor(a, name, owner.id);
    mkdirSync(join(await a.worlds.folders!.folder(name), 'world'));
    // What replica A had recorded when it was SIGKILLed mid-export: the ticket, the running job and
    // the world lock it took for the job (renewed by A alone, so it lapses with A).
    const ticket = crypto.randomUUID();
    const holder = crypto.randomUUID();
    const now = a.clock.now();
    await a.database.db.insert(worldExports).values({
      ticket, serverName: name, requestedBy: owner.id, source: 'world', state: 'pending', storageKey: `exports/${ticket}`,
      filename: `${name}.tar.gz`, contentType: 'application/gzip', createdAt: now, expiresAt: new Date(now.getTime() + 3600_000),
    });
    await recordJob(a, { id: holder, serverName: name, kind: 'export', lockHolder: holder, requestedBy: owner.id });
    await a.database.db.insert(leases).values({ key: `world:${name}`, holder, purpose: 'export', acquiredAt: now, leaseUntil: new Date(now.getTime() + LOCK_LEASE_MS), replica: a.replica });
    const external = createTestApps(b).external;
    const state = async () => (await (await external.request(`/api/v1/exports/${ticket}`, { headers: owner.headers })).json()) as { state: string };

    await lockSweep(b);
    expect(await state()).toEqual({ state: 'pending' }); // A might still be alive: its lock has not lapsed
    b.clock.advance(LOCK_LEASE_MS + 1);
    await lockSweep(b);
    expect(await state()).toMatchObject({ state: 'failed', message: 'the replica making this export stopped; ask for it again' });
    const [job] = await b.database.db.select().from(worldJobs).where(eq(worldJobs.id, holder));
    expect(job).toMatchObject({ state: 'failed', message: 'the replica running this job stopped' });
    // The world is free again: a new export is taken by the survivor and ends ready.
    const made = await external.request(`/api/v1/servers/${name}/world/export`, { method: 'POST', headers: owner.headers });
    expect(made.status).toBe(202);
    await b.worlds.jobs.idle();
    const { ticket: next } = (await made.json()) as { ticket: string };
    expect(await (await external.request(`/api/v1/exports/${next}`, { headers: owner.headers })).json()).toEqual({ state: 'ready' });
  });
});
