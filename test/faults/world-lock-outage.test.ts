import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedCluster } from '../../src/adapters/cluster/simulated.js';
import { eq } from 'drizzle-orm';
import { LEASE_KEYS, leaseOf } from '../../src/coordination/index.js';
import { worldJobs } from '../../src/db/schema/worlds.js';
import type { TestDeps } from '../helpers/app.js';
import { addServer } from '../helpers/servers.js';
import { startTestService } from '../helpers/service.js';
import { ThrowawayPostgres } from '../helpers/throwaway-postgres.js';
import { claimFor, worldMember } from '../helpers/worlds.js';

interface Answer {
  status: number;
  body: string;
}

/** A PUT whose body is sent in two halves; `between` runs after the first half reached the service. */
function putInTwoHalves(port: number, path: string, headers: Record<string, string>, halves: [Buffer, Buffer], between: () => Promise<void>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'PUT', headers: { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(halves[0].length + halves[1].length) } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.write(halves[0], () => {
      void between().then(
        () => req.end(halves[1]),
        (err: unknown) => req.destroy(err as Error),
      );
    });
  });
}

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: body ? { ...headers, 'Content-Type': 'application/json' } : headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', reject).end(body);
  });
}

async function eventually(check: () => Promise<void>, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('a PostgreSQL outage during a world file write (issue 30, item 1)', () => {
  let pg: ThrowawayPostgres;
  let dataDir: string;
  let service: Awaited<ReturnType<typeof startTestService>>;

  beforeAll(async () => {
    pg = await ThrowawayPostgres.create();
    dataDir = mkdtempSync(join(tmpdir(), 'felis-lock-outage-'));
    service = await startTestService({ DATABASE_URL: pg.url, DATA_DIR: dataDir });
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await pg?.destroy();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers what the write did, and frees the world lock as soon as the database is back', async () => {
    const deps = service.deps as unknown as TestDeps;
    const owner = await worldMember(deps);
    const { name } = addServer({ ...deps, cluster: service.deps.cluster as SimulatedCluster } as TestDeps).spec;
    await claimFor(deps, name, owner.id);
    const folder = await service.deps.worlds.folders!.folder(name);
    const headers = { ...owner.headers, Host: service.deps.config.panelHost! };
    const port = service.external.port;
    const halves: [Buffer, Buffer] = [Buffer.alloc(64 * 1024, 1), Buffer.alloc(64 * 1024, 2)];

    // The database goes away while the bytes arrive: the lock was taken, the file is written after.
    const written = await putInTwoHalves(port, `/api/v1/servers/${name}/files/upload?path=data.bin&overwrite=true`, headers, halves, async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await pg.stop();
    });
    const landed = readFileSync(join(folder, 'data.bin'));
    expect(landed.equals(Buffer.concat(halves))).toBe(true);
    // The change was made: the answer says so.
    expect(written.status, written.body).toBe(200);

    await pg.start();
    // Within seconds of the database's return the lock is gone (not after its 60 s lease).
    await eventually(async () => {
      expect(await leaseOf(service.deps.database.db, LEASE_KEYS.world(name))).toBeUndefined();
    }, 10_000);
    const next = await send(port, 'PUT', `/api/v1/servers/${name}/file?path=after.txt`, headers, JSON.stringify({ content: Buffer.from('after').toString('base64'), create_only: true }));
    expect(next.status, next.body).toBe(200);
  }, 60_000);

  it('records a restore that finished while the database was away as succeeded once it is back (item 2)', async () => {
    const deps = service.deps as unknown as TestDeps;
    const owner = await worldMember(deps);
    const { name } = addServer({ ...deps, cluster: service.deps.cluster as SimulatedCluster } as TestDeps).spec;
    await claimFor(deps, name, owner.id);
    const folder = await service.deps.worlds.folders!.folder(name);
    writeFileSync(join(folder, 'server.properties'), 'motd=backed up\n');
    const headers = { ...owner.headers, Host: service.deps.config.panelHost! };
    const port = service.external.port;
    expect((await send(port, 'POST', `/api/v1/servers/${name}/backup`, headers)).status).toBe(202);
    await service.deps.worlds.jobs.idle();
    writeFileSync(join(folder, 'server.properties'), 'motd=changed since\n');

    const unrecorded = () =>
      service.captured.lines().filter((l) => l.msg === "a world job's outcome could not be recorded: retrying until the database answers").length;

    // The restore's step waits in the store's read until the database has gone away.
    const store = service.deps.worlds.store;
    let reading!: () => void;
    const readStarted = new Promise<void>((resolve) => (reading = resolve));
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    service.deps.worlds.store = Object.assign(Object.create(store) as typeof store, {
      get: async (key: string) => {
        reading();
        await gate;
        return store.get(key);
      },
    });
    try {
      const started = await send(port, 'POST', `/api/v1/servers/${name}/restore-backup`, headers, JSON.stringify({ safety_snapshot: false }));
      expect(started.status, started.body).toBe(202);
      await readStarted;
      const unrecordedBefore = unrecorded();
      await pg.stop();
      go();
      // The world is replaced while nothing can be recorded.
      await eventually(async () => expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=backed up\n'), 10_000);
      // Its outcome could not be recorded meanwhile: the job says so, and tries again until the database is back.
      await eventually(async () => {
        expect(unrecorded()).toBeGreaterThan(unrecordedBefore);
      }, 10_000);
      await pg.start();
      await service.deps.worlds.jobs.idle();
    } finally {
      service.deps.worlds.store = store;
    }
    await eventually(async () => {
      const jobs = await service.deps.database.db.select().from(worldJobs).where(eq(worldJobs.serverName, name));
      expect(jobs.find((j) => j.kind === 'restore')).toMatchObject({ state: 'succeeded', message: null });
    }, 10_000);
    await eventually(async () => expect(await leaseOf(service.deps.database.db, LEASE_KEYS.world(name))).toBeUndefined(), 10_000);
  }, 60_000);
});
