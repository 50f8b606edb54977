import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, TEST_ENV, type TestDeps } from '../../../test/helpers/app.js';
import { loadConfig } from '../../config.js';
import { createWorldsRuntime } from '../worlds/index.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { testWorlds, useTempDir, worldManifest } from '../../../test/helpers/worlds.js';
import { SimulatedCluster } from '../../adapters/cluster/simulated.js';
import { moveClaimName } from '../../adapters/cluster/world-volumes.js';
import { nodeTasks, serverMoves } from '../../db/schema/nodes.js';
import { worldBackups } from '../../db/schema/worlds.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { LOCK_LEASE_MS, sweepFreeLocks } from '../worlds/jobs/lock.js';
import { startBackup } from '../worlds/index.js';
import { beginMove, failAbandonedMoves, MOVE_STAGES, MoveInterrupted, retryMove, type MoveStage } from './moves.js';
import { runNodeTask } from './runner.js';

const MOVES = (name: string) => `/api/v1/servers/${name}/migrations`;

/** A small world with nested folders and binary region files. */
function seed(folder: string, salt: string): string[] {
  mkdirSync(join(folder, 'world', 'region'), { recursive: true });
  mkdirSync(join(folder, 'world', 'playerdata'), { recursive: true });
  mkdirSync(join(folder, 'plugins', 'empty'), { recursive: true });
  writeFileSync(join(folder, 'server.properties'), `motd=${salt}\nmax-players=20\n`);
  const region = Buffer.alloc(300 * 1024);
  for (let i = 0; i < region.length; i++) region[i] = ((i + salt.length) * 2654435761) >>> 24;
  writeFileSync(join(folder, 'world', 'region', 'r.0.0.mca'), region);
  writeFileSync(join(folder, 'world', 'playerdata', `${salt}.dat`), Buffer.from([0, 1, 2, 0xff, 0xfe, salt.length]));
  return worldManifest(folder);
}

describe('moving a world between node-local volumes (simulated cluster)', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir('felis-moves-');
  let deps: TestDeps;
  let cluster: SimulatedCluster;
  let worlds: ReturnType<typeof testWorlds>;
  let apps: ReturnType<typeof createTestApps>;
  let staff: Record<string, string>;
  let session: SessionContext;
  let counter = 0;

  beforeEach(async () => {
    const clock = createTestDeps(database()).clock;
    cluster = new SimulatedCluster({ clock, nodes: 3, nodeLocalVolumes: true, startDelayMs: 1_000, stopDelayMs: 1_000 });
    worlds = testWorlds(tempDir());
    worlds.folders.followVolumes(async (name) => (cluster.server(name) ? (await cluster.nodes.volumes!.current(name)).claim : undefined));
    deps = createTestDeps(database(), { overrides: { cluster, clock, worlds } });
    apps = createTestApps(deps);
    const admin = await createUser(deps, { role: 'admin', email: `a${Math.random()}@example.com`, emailVerified: true });
    staff = (await signIn(deps, { userId: admin.id })).headers;
    session = { userId: admin.id, role: 'admin', tokenHash: 'x', inSetup: false };
  });

  const get = (path: string) => apps.external.request(path, { headers: staff });
  const post = (path: string, body?: unknown) => apps.external.request(path, body === undefined ? { method: 'POST', headers: staff } : jsonRequest('POST', body, staff));

  /** A stopped server whose world (seeded) is on `node`. */
  async function stoppedWorld(node = 'sim-node-1') {
    const name = `world-${++counter}-${Math.random().toString(36).slice(2, 6)}`;
    cluster.addServer({ name, subdomain: name, labels: {}, desiredState: 'Stopped', node });
    const folder = await worlds.folders.folder(name);
    return { name, folder, before: seed(folder, name) };
  }

  /** The move's row once nothing of it runs in this process any more. */
  async function settled(id: string) {
    await deps.worlds.jobs.idle();
    const [row] = await deps.database.db.select().from(serverMoves).where(eq(serverMoves.id, id));
    return row!;
  }

  /** The server is whole on its source: spec, volume and world untouched. */
  async function expectOnSource(name: string, folder: string, before: string[]) {
    expect(cluster.server(name)?.spec.node).toBe('sim-node-1');
    expect(cluster.server(name)?.spec.worldVolume).toBeUndefined();
    expect(await worlds.folders.folder(name)).toBe(folder);
    expect(worldManifest(folder)).toEqual(before);
  }

  /** The server runs from its new volume on the target, byte-identical; the old volume is gone. */
  async function expectOnTarget(name: string, id: string, folder: string, before: string[]) {
    const claim = moveClaimName(name, id);
    expect(cluster.server(name)?.spec).toMatchObject({ node: 'sim-node-2', worldVolume: claim });
    const moved = await worlds.folders.folder(name);
    expect(moved).toBe(worlds.folders.pathOf(name, claim));
    expect(worldManifest(moved)).toEqual(before);
    expect(existsSync(folder)).toBe(false);
    // Nothing else is left on the volumes: no staging folder of a restore, no second claim.
    expect(readdirSync(join(worlds.folders.root, '.volumes'))).toEqual([claim]);
  }

  it('copies the world step by step: archived and verified, a volume on the target, restored byte-identical, switched, old volume released', async () => {
    const { name, folder, before } = await stoppedWorld();
    const nodesView = (await (await get('/api/v1/nodes')).json()) as { sharedVolumes: boolean };
    expect(nodesView.sharedVolumes).toBe(false);

    const res = await post(MOVES(name), { targetNode: 'sim-node-2' });
    expect(res.status).toBe(202);
    const started = (await res.json()) as { id: string; state: string };
    expect(started).toMatchObject({ server: name, state: 'running', sourceNode: 'sim-node-1', targetNode: 'sim-node-2', switched: false, attempt: 0 });
    const row = await settled(started.id);
    expect(row).toMatchObject({ state: 'succeeded', stage: 'succeeded', switched: true, sourceVolume: `world-${name}-0`, targetVolume: moveClaimName(name, started.id) });
    expect(await (await get(MOVES(name))).json()).toMatchObject({ id: started.id, state: 'succeeded', stage: 'succeeded', switched: true });
    await expectOnTarget(name, started.id, folder, before);

    // The archive is a verified backup in the store, whose sha-256 the restore was checked against.
    const [archive] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, row.backupId!));
    expect(archive).toMatchObject({ serverName: name, reason: 'pre_restore', status: 'present', corrupt: false });
    expect(archive!.verifiedAt).not.toBeNull();

    // The next start runs on the target node, from the moved world.
    await deps.cluster.setDesiredState(name, 'Running');
    expect(cluster.server(name)?.status.node).toBe('sim-node-2');
  });

  const COPY_STAGES = MOVE_STAGES.filter((s): s is Exclude<MoveStage, 'succeeded'> => s !== 'succeeded');

  describe.each(COPY_STAGES)('a move stopped at %s', (stage) => {
    const committed = stage === 'switching' || stage === 'releasing';

    it('that fails leaves the server whole on its source (or, once switched, on its target), and a retry finishes it byte-identical', async () => {
      const { name, folder, before } = await stoppedWorld();
      const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
        checkpoint: (at) => {
          if (at === stage) throw new Error(`injected failure after ${at}`);
        },
      });
      const failed = await settled(move.id);
      expect(failed).toMatchObject({ state: 'failed', stage, switched: committed, error: `injected failure after ${stage}` });
      if (!committed) await expectOnSource(name, folder, before);
      else expect(cluster.server(name)?.spec.node).toBe('sim-node-2');

      const again = await retryMove(deps, session, name, move.id, undefined);
      expect(again.attempt).toBe(1);
      expect(await settled(move.id)).toMatchObject({ state: 'succeeded', stage: 'succeeded', switched: true, attempt: 1, error: null });
      await expectOnTarget(name, move.id, folder, before);
    });

    it('whose runner is killed keeps the world locked until its lock lapses, then a retry finishes it byte-identical', async () => {
      const { name, folder, before } = await stoppedWorld();
      const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
        checkpoint: (at) => {
          if (at === stage) throw new MoveInterrupted('killed');
        },
      });
      const killed = await settled(move.id);
      expect(killed).toMatchObject({ state: 'running', stage, switched: committed });
      if (!committed) await expectOnSource(name, folder, before);

      // The world lock outlives the dead runner: no backup, no retry until it lapses.
      await expect(startBackup(deps, name, session.userId)).rejects.toMatchObject({ code: 'maintenance_in_progress' });
      const early = await post(`${MOVES(name)}/${move.id}/retry`);
      expect(early.status).toBe(409);
      expect((await errorOf(early)).code).toBe('migration_busy');

      deps.clock.advance(LOCK_LEASE_MS + 1_000);
      const retried = await post(`${MOVES(name)}/${move.id}/retry`);
      expect(retried.status).toBe(202);
      expect(await retried.json()).toMatchObject({ id: move.id, attempt: 1 });
      expect(await settled(move.id)).toMatchObject({ state: 'succeeded', stage: 'succeeded', switched: true, attempt: 1 });
      await expectOnTarget(name, move.id, folder, before);
    });
  });

  it('a move whose runner died is marked failed before a wake may start the server, even once its world lock was swept (issue 43 item 6)', async () => {
    const { name, folder, before } = await stoppedWorld();
    const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
      checkpoint: (at) => {
        if (at === 'restoring') throw new MoveInterrupted('killed');
      },
    });
    expect(await settled(move.id)).toMatchObject({ state: 'running', stage: 'restoring', switched: false });
    // The runner's lock lapses and is swept (as the sweep on its replica's death does at once).
    deps.clock.advance(LOCK_LEASE_MS + 1_000);
    expect(await sweepFreeLocks(deps.database.db, deps.clock.now())).toHaveLength(1);

    // Still "running": the server is not woken on its source meanwhile.
    const early = await post(`/api/v1/servers/${name}/wake`);
    expect(early.status).toBe(409);
    expect((await errorOf(early)).code).toBe('maintenance_in_progress');
    expect(cluster.server(name)?.spec.desiredState).toBe('Stopped');

    // The round on any replica marks it failed, saying where it stopped; the server is whole on its source.
    expect(await failAbandonedMoves(deps)).toBe(1);
    expect(await failAbandonedMoves(deps)).toBe(0);
    expect(await settled(move.id)).toMatchObject({ state: 'failed', error: expect.stringContaining('ended at the restoring step') });
    await expectOnSource(name, folder, before);
    const retried = await post(`${MOVES(name)}/${move.id}/retry`);
    expect(retried.status).toBe(202);
    expect(await settled(move.id)).toMatchObject({ state: 'succeeded', attempt: 1 });
    await expectOnTarget(name, move.id, folder, before);
    expect((await post(`/api/v1/servers/${name}/wake`)).status).toBe(202);
    expect(cluster.server(name)?.status.node).toBe('sim-node-2');
  });

  it('a target cordoned while the world is copied fails the move at the switch, and a node under maintenance is refused as a target (issue 43 item 5)', async () => {
    const { name, folder, before } = await stoppedWorld();
    const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
      checkpoint: async (at) => {
        if (at === 'restoring') await cluster.nodes.setUnschedulable('sim-node-2', true);
      },
    });
    expect(await settled(move.id)).toMatchObject({ state: 'failed', stage: 'switching', switched: false, error: expect.stringContaining('sim-node-2') });
    await expectOnSource(name, folder, before);

    // A node whose last task took it out of service (a cordon that failed, here) takes no world.
    const now = deps.clock.now();
    await deps.database.db.insert(nodeTasks).values({ id: 'task-1', action: 'cordon', node: 'sim-node-3', request: {}, actor: session.userId, state: 'failed', stage: 'cordoning', startedAt: now, finishedAt: now });
    const other = await stoppedWorld();
    const refused = await post(MOVES(other.name), { targetNode: 'sim-node-3' });
    expect(refused.status).toBe(400);
    expect((await errorOf(refused)).code).toBe('bad_node');
  });

  it('a drain of the target counts the world moving in: it waits for the move, which fails at the switch, and releases it (issue 43 item 5)', async () => {
    const { name, folder, before } = await stoppedWorld();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let restored!: () => void;
    const atRestoring = new Promise<void>((resolve) => (restored = resolve));
    const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
      checkpoint: async (at) => {
        if (at !== 'restoring') return;
        restored();
        await gate;
      },
    });
    await atRestoring;
    // The drain of the move's target starts while the world is being copied there.
    const now = deps.clock.now();
    const request = { action: 'drain', name: 'sim-node-2', confirmMaintenance: true } as const;
    const id = `drain-${Math.random().toString(36).slice(2)}`;
    await deps.database.db.insert(nodeTasks).values({ id, action: 'drain', node: 'sim-node-2', request, actor: session.userId, state: 'running', stage: 'preflight', startedAt: now, log: '' });
    const task = async () => (await deps.database.db.select().from(nodeTasks).where(eq(nodeTasks.id, id)))[0]!;
    const draining = runNodeTask(deps, id);
    await vi.waitFor(async () => expect((await task()).stage).toBe('releasing'), { timeout: 5_000, interval: 25 });
    // Several of the drain's polls go by: it does not end while the world is still moving in.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await task()).toMatchObject({ state: 'running', stage: 'releasing' });

    open();
    await draining;
    const failed = await settled(move.id);
    expect(failed).toMatchObject({ state: 'failed', stage: 'switching', switched: false, error: 'node maintenance is in progress' });
    await expectOnSource(name, folder, before);
    const done = await task();
    expect(done.state).toBe('succeeded');
    expect(done.log).toContain('released 1 world volume(s)');
    expect(cluster.server(name)?.spec.node).toBe('sim-node-1');
    // The other tests (one database on PostgreSQL) take sim-node-2 as a target in service.
    await deps.database.db.delete(nodeTasks).where(eq(nodeTasks.id, id));
  });

  it('an archive that no longer matches its sha-256 fails the restore, the server stays on its source, and a retry archives again', async () => {
    const { name, folder, before } = await stoppedWorld();
    const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
      checkpoint: async (at) => {
        if (at !== 'creating') return;
        // The stored archive changes between its read-back and the restore (a store's bit rot).
        const [row] = await deps.database.db.select().from(serverMoves).where(eq(serverMoves.server, name));
        const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.id, row!.backupId!));
        const path = join(worlds.folders.root, '..', 'backups', backup!.storageKey);
        const bytes = readFileSync(path);
        bytes[bytes.length - 9] = bytes[bytes.length - 9]! ^ 0xff;
        writeFileSync(path, bytes);
      },
    });
    const failed = await settled(move.id);
    expect(failed).toMatchObject({ state: 'failed', stage: 'restoring', switched: false });
    expect(failed.error).toMatch(/^backup_corrupt/);
    await expectOnSource(name, folder, before);

    await retryMove(deps, session, name, move.id, undefined);
    const done = await settled(move.id);
    expect(done).toMatchObject({ state: 'succeeded', attempt: 1 });
    expect(done.backupId).not.toBe(failed.backupId);
    await expectOnTarget(name, move.id, folder, before);
  });

  it('refuses a running server (409 migration_busy) and leaves a move with an unreachable cluster failed, retryable', async () => {
    const { name, folder, before } = await stoppedWorld();
    await deps.cluster.setDesiredState(name, 'Running');
    const busy = await post(MOVES(name), { targetNode: 'sim-node-2' });
    expect(busy.status).toBe(409);
    expect((await errorOf(busy)).code).toBe('migration_busy');
    await deps.cluster.setDesiredState(name, 'Stopped');
    deps.clock.advance(2_000);
    cluster.tick();

    const move = await beginMove(deps, session, name, 'sim-node-2', undefined, {
      checkpoint: (at) => {
        if (at === 'archiving') cluster.setReachable(false);
      },
    });
    const failed = await settled(move.id);
    expect(failed).toMatchObject({ state: 'failed', stage: 'creating', switched: false });
    cluster.setReachable(true);
    await expectOnSource(name, folder, before);
    await expect(retryMove(deps, session, name, move.id, undefined)).resolves.toMatchObject({ attempt: 1 });
    expect(await settled(move.id)).toMatchObject({ state: 'succeeded' });
    await expectOnTarget(name, move.id, folder, before);
  });

  it("the service's own worlds runtime (npm start) follows a moved world to the folder of its new volume", async () => {
    const dataDir = tempDir();
    const runtime = createWorldsRuntime(loadConfig({ ...TEST_ENV, DATA_DIR: dataDir } as NodeJS.ProcessEnv), cluster, { log: deps.log });
    cluster.addServer({ name: 'followed', subdomain: 'followed', labels: {}, desiredState: 'Stopped', node: 'sim-node-1' });
    expect(await runtime.folders!.folder('followed')).toBe(join(dataDir, 'worlds', 'followed'));
    await cluster.nodes.volumes!.create('followed', 'world-followed-0a1b2c3d', 'sim-node-2');
    await cluster.nodes.volumes!.switchTo('followed', { claim: 'world-followed-0a1b2c3d', node: 'sim-node-2' });
    expect(await runtime.folders!.folder('followed')).toBe(join(dataDir, 'worlds', '.volumes', 'world-followed-0a1b2c3d'));
    expect(await runtime.folders!.folder('no-such-server')).toBe(join(dataDir, 'worlds', 'no-such-server'));
  });

  it('only a failed or abandoned move is retried', async () => {
    const { name } = await stoppedWorld();
    const move = await beginMove(deps, session, name, 'sim-node-2', undefined);
    await settled(move.id);
    await expect(retryMove(deps, session, name, move.id, undefined)).rejects.toSatisfy((err) => err instanceof DomainError && err.code === 'migration_busy');
  });
});
