import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { eq, like } from 'drizzle-orm';
import { S3BackupStore } from '../../src/adapters/backup-store/s3.js';
import { CONTROLLER_LEASE } from '../../src/adapters/cluster/kubernetes/controller.js';
import { rconSecretName } from '../../src/adapters/cluster/kubernetes/resource.js';
import { HEARTBEAT_TTL_MS } from '../../src/coordination/index.js';
import { leases } from '../../src/db/schema/coordination.js';
import { worldJobs } from '../../src/db/schema/worlds.js';
import { submissions } from '../../src/db/schema/submissions.js';
import { serverSchedules } from '../../src/db/schema/schedules.js';
import { openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { ObjectContextStore } from '../../src/features/builds/submissions/context-store.js';
import { LOCK_LEASE_MS } from '../../src/features/worlds/jobs/lock.js';
import { hashStream } from '../../src/features/worlds/volumes/archive.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTestDeps, TOKENS } from './app.js';
import { adminKubeConfig, PlayedCluster } from './kube-api.js';
import { spawnService, type ServiceProcess } from './process.js';
import { startRconPeer, type RconPeer } from './rcon-peer.js';
import { createUser, signIn } from './sessions.js';

/**
 * The failover scenario of issue 32, shared by its test (test/robustness/failover.test.ts) and its
 * bench (bench/failover.ts): two service processes on one PostgreSQL database and one S3 server,
 * CLUSTER=kubernetes against one real API server; a client spreads the proxy's calls and panel
 * reads over both while an upload goes in parts to both; the replica that leads the controller is
 * SIGKILLed mid-load; the upload finishes through the survivor; the killed replica comes back.
 *
 * The test plays what the API server lacks (PlayedCluster): the StatefulSet controller, the
 * kubelet (a pod reports ready as soon as it exists), a Ready node, and the game's RCON port (a
 * peer on a loopback address that the services' `<server>.<namespace>.svc` names resolve to, by
 * the test-only preload svc-dns.ts). A server is woken through the killed replica just before the
 * kill (the proxy's wake), and must end Running and ready through the survivor's controller; a
 * stop sent to the survivor afterwards must be carried out cleanly (save-all, then Stopped).
 */
export interface FailoverSetup {
  /** How to start the service: `node --import tsx src/main.ts` (tests) or `node dist/main.js` (bench). */
  command: string;
  args: string[];
  databaseUrl: string;
  kubeconfig: string;
  namespace: string;
  s3: { endpoint: string; bucket: string };
  /** Load before and after the kill, in milliseconds. */
  loadMs?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Told each step as it begins (a bench prints them). */
  step?: (what: string) => void;
}

export interface FailoverFigures {
  requests: number;
  answered: number;
  /**
   * Requests to the killed replica in flight at the kill or sent before the client saw it gone: at
   * most one per worker (`concurrency`), since a worker's failure takes the replica out of its rotation.
   */
  failedAtKill: number;
  /** The client's workers (requests in flight at once). */
  concurrency: number;
  /** Requests that failed otherwise (must be 0). */
  wrong: Array<{ replica: string; status: number | string; path: string }>;
  /** Answers per replica before and after the kill. */
  perReplica: Record<string, number>;
  /** Seconds from the kill until each leader lease the killed replica held was held by the survivor. */
  takeoverSeconds: Record<string, number>;
  /** The lease length the takeovers are measured against. */
  leaseSeconds: number;
  upload: { bytes: number; sha256Matches: boolean; partsOnKilled: number; partsOnSurvivor: number; stagedLeft: number; submissionRows: number };
  /** The killed replica's second life: requests it answered, and its previous life's leases left over. */
  returned: { answered: number; of: number; leftoverLeases: number; seconds: number };
  /**
   * The wake sent to the killed replica just before the kill (its answer), the seconds from the
   * kill until the server was Running and ready as the survivor tells it, and the stop sent to the
   * survivor afterwards: its answer, the seconds until Stopped, whether the game got `save-all flush`.
   */
  wake: { status: number; runningSeconds: number | null; stopStatus: number; stopSeconds: number | null; savedBeforeStop: boolean };
}

/** The RCON port every game server's Service exposes (src/adapters/cluster/kubernetes). */
const RCON_PORT = 25575;

/**
 * Where the service is started with the test's cluster DNS preloaded (svc-dns.ts; compiled beside
 * this file for the bench): before the entry script, the last of `args`.
 */
function withClusterDns(args: string[]): string[] {
  const preload = new URL(import.meta.url.endsWith('.ts') ? './svc-dns.ts' : './svc-dns.js', import.meta.url).href;
  return [...args.slice(0, -1), '--import', preload, ...args.slice(-1)];
}

/**
 * The cluster parts the API server lacks, played while the scenario runs: a Ready node, the
 * StatefulSet controller's pods, the kubelet reporting each ready, and the game's RCON port.
 */
async function playCluster(kubeconfig: string, namespace: string) {
  const admin = adminKubeConfig(kubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  const played = new PlayedCluster(admin, namespace);
  await played.prepareNamespace();
  const node = `${namespace}-node`;
  await core.createNode({ body: { metadata: { name: node } } }).catch((err: unknown) => {
    if ((err as { code?: number }).code !== 409) throw err;
  });
  const read = await core.readNode({ name: node });
  await core.replaceNodeStatus({ name: node, body: { ...read, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
  // A loopback address of this run's own: port 25575 on it is free whatever else runs here.
  const svcAddress = `127.${randomInt(1, 250)}.${randomInt(1, 250)}.${randomInt(1, 250)}`;
  let peer: RconPeer | undefined;
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      await played.syncStatefulSets();
      for (const pod of (await core.listNamespacedPod({ namespace })).items) {
        const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (!ready && pod.metadata?.name) await played.setPodReady(pod.metadata.name, true).catch(() => undefined);
      }
    } catch {
      // The next tick tries again (a pod deleted meanwhile, a conflict).
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), 250);
  return {
    svcAddress,
    /** Listens as the game's RCON port with the server's password (from its Secret). */
    async openRcon(server: string): Promise<RconPeer> {
      let secret;
      for (let i = 0; i < 100 && !secret; i++) {
        secret = await core.readNamespacedSecret({ name: rconSecretName(server), namespace }).catch(() => undefined);
        if (!secret) await sleep(100);
      }
      const password = Buffer.from(secret?.data?.password ?? '', 'base64').toString('utf8');
      peer = await startRconPeer({ password, host: svcAddress, port: RCON_PORT });
      return peer;
    },
    async stop() {
      clearInterval(timer);
      await peer?.close();
      await core.deleteNode({ name: node }).catch(() => undefined);
    },
  };
}

const LEASE_SECONDS = 10;

interface Answer {
  status: number;
  text: string;
}

/** One HTTP exchange on 127.0.0.1 with the Host the caller names (fetch may not set Host). */
function send(port: number, path: string, init: { method?: string; headers?: Record<string, string>; body?: Uint8Array | string }): Promise<Answer> {
  const body = init.body === undefined ? undefined : typeof init.body === 'string' ? Buffer.from(init.body) : Buffer.from(init.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: init.method ?? 'GET', path, timeout: 10_000, headers: { ...init.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runFailover(setup: FailoverSetup): Promise<FailoverFigures> {
  const cluster = await playCluster(setup.kubeconfig, setup.namespace);
  const args = withClusterDns(setup.args);
  const env = (pod: string) => ({
    FELIS_TEST_SVC_ADDRESS: cluster.svcAddress,
    DATABASE_URL: setup.databaseUrl,
    CLUSTER: 'kubernetes',
    KUBECONFIG: setup.kubeconfig,
    KUBE_NAMESPACE: setup.namespace,
    // The operator's word that the Minecraft EULA is accepted: the woken game may start.
    KUBE_EULA: 'true',
    POD_NAME: pod,
    BACKUP_S3_BUCKET: setup.s3.bucket,
    BACKUP_S3_ENDPOINT: setup.s3.endpoint,
    BACKUP_S3_ACCESS_KEY_ID: 'S3RVER',
    BACKUP_S3_SECRET_ACCESS_KEY: 'S3RVER',
    // The `listening` line (info) is how spawnService learns the ports.
    LOG_LEVEL: 'info',
  });
  const names = ['felis-a', 'felis-b'] as const;
  let db: DatabaseHandle | undefined;
  const live = new Map<string, ServiceProcess>();
  try {
    const started = await Promise.all(names.map((pod) => spawnService(setup.command, args, env(pod))));
    for (const [i, pod] of names.entries()) live.set(pod, started[i]!);
    db = openPostgres(setup.databaseUrl);
    const deps = createTestDeps(db, { overrides: { clock: systemClock } });
    const user = await createUser(deps);
    const { headers: panel } = await signIn(deps, { userId: user.id });
    const operator = await createUser(deps, { role: 'admin' });
    const { headers: staff } = await signIn(deps, { userId: operator.id });
    const proxy = { Authorization: `Bearer ${TOKENS.proxy}` };

    const step = setup.step ?? (() => undefined);
    step('both replicas listen');
    // Wait until the controller has a leader; that replica is the one killed.
    // The database's leader leases, and the lifecycle controller's Kubernetes Lease (its holder
    // `<pod>_<uuid>` written as `<pod>/…` like the others').
    const coordination = adminKubeConfig(setup.kubeconfig).makeApiClient(CoordinationV1Api);
    const leaders = async () => {
      const rows = await db!.db.select({ key: leases.key, holder: leases.holder }).from(leases).where(like(leases.key, 'leader:%'));
      const lease = await coordination.readNamespacedLease({ name: CONTROLLER_LEASE, namespace: setup.namespace }).catch(() => undefined);
      const holder = lease?.spec?.holderIdentity;
      return holder ? [...rows, { key: `lease:${CONTROLLER_LEASE}`, holder: holder.replace('_', '/') }] : rows;
    };
    let victim: (typeof names)[number] | undefined;
    for (let i = 0; i < 200 && !victim; i++) {
      const controller = (await leaders()).find((l) => l.key === `lease:${CONTROLLER_LEASE}`);
      victim = names.find((pod) => controller?.holder.startsWith(`${pod}/`));
      if (!victim) await sleep(100);
    }
    if (!victim) throw new Error('no replica took the controller lease');
    const survivor = names.find((pod) => pod !== victim)!;

    // A game server that anyone may wake, and its RCON port.
    const server = `fo-${randomBytes(3).toString('hex')}`;
    const json = (headers: Record<string, string>) => ({ ...headers, 'Content-Type': 'application/json' });
    const createdServer = await send(live.get(survivor)!.externalPort, '/api/v1/servers', {
      method: 'POST',
      headers: json(staff),
      body: JSON.stringify({ name: server, subdomain: server, autostart_policy: 'public' }),
    });
    if (createdServer.status !== 201) throw new Error(`server: ${createdServer.status} ${createdServer.text}`);
    const rcon = await cluster.openRcon(server);
    const statusOf = async (pod: string) => {
      const res = await send(live.get(pod)!.internalPort, `/api/v1/internal/servers/${server}/status`, { headers: proxy });
      return res.status === 200 ? (JSON.parse(res.text) as { phase: string; ready: boolean }) : undefined;
    };

    // The client: round robin over the replicas it believes alive; a connection that fails on the
    // killed replica takes it out of the rotation (as a Service's endpoints would).
    const routed = new Set<string>(names);
    const concurrency = setup.concurrency ?? 4;
    const figures = { requests: 0, answered: 0, failedAtKill: 0, concurrency, wrong: [] as FailoverFigures['wrong'], perReplica: {} as Record<string, number> };
    let killedAt: number | undefined;
    let turn = 0;
    const call = async (pod: string, face: 'internal' | 'external', path: string, init: { method?: string; headers?: Record<string, string>; body?: Uint8Array | string } = {}) => {
      const proc = live.get(pod)!;
      return send(face === 'internal' ? proc.internalPort : proc.externalPort, path, init);
    };
    const one = async () => {
      const pod = [...routed][turn++ % routed.size]!;
      const [face, path, headers] = turn % 2 === 0 ? (['internal', '/api/v1/servers', proxy] as const) : (['external', '/api/v1/me', panel] as const);
      figures.requests += 1;
      try {
        const res = await call(pod, face, path, { headers });
        if (res.status === 200) {
          figures.answered += 1;
          figures.perReplica[pod] = (figures.perReplica[pod] ?? 0) + 1;
        } else figures.wrong.push({ replica: pod, status: res.status, path });
      } catch (err) {
        // The kill is the cause when the request was on the killed replica and failed after the
        // kill: in flight then, however long before it was sent (on a loaded machine a request
        // waits far longer than any fixed margin; an earlier rule counted only those sent within
        // 50 ms of the kill, or the first failure, so a second request in flight since before that
        // was called wrong), or sent before this client saw the replica gone. A catch that runs
        // while killedAt is unset is a failure before the kill: wrong. Bounded by the test: at
        // most one per worker.
        if (pod === victim && killedAt !== undefined) {
          figures.failedAtKill += 1;
          routed.delete(pod);
        } else figures.wrong.push({ replica: pod, status: (err as Error).message, path });
      }
    };
    let loading = true;
    const workers = Array.from({ length: concurrency }, async () => {
      while (loading) await one();
    });

    // The upload: a submission context in parts, the first on the victim, the second on the survivor.
    const PART = 256 * 1024;
    const context = randomBytes(PART * 4 + 4321);
    const made = await call(victim, 'external', '/api/v1/me/submissions', { method: 'POST', headers: { ...panel, 'Content-Type': 'application/json' }, body: JSON.stringify({ display_name: 'Failover pack' }) });
    if (made.status !== 201) throw new Error(`submission: ${made.status} ${made.text}`);
    const { id } = JSON.parse(made.text) as { id: string };
    const upload = `/api/v1/me/submissions/${id}/context/upload`;
    let offset = 0;
    const putPart = async (pod: string) => {
      const part = context.subarray(offset, offset + PART);
      const res = await call(pod, 'external', `${upload}?offset=${offset}`, {
        method: 'PUT',
        headers: { ...panel, 'Content-Type': 'application/octet-stream', 'Content-Digest': `sha-256=:${createHash('sha256').update(part).digest('base64')}:` },
        body: new Uint8Array(part),
      });
      if (res.status !== 200) throw new Error(`part at ${offset} on ${pod}: ${res.status} ${res.text}`);
      offset += part.length;
    };
    await putPart(victim);
    await putPart(survivor);
    await putPart(victim);
    const partsOnKilled = 2;

    step(`upload parts on both; load for ${setup.loadMs ?? 3_000} ms, then SIGKILL ${victim}`);
    const loadMs = setup.loadMs ?? 3_000;
    await sleep(loadMs);
    const heldByVictim = (await leaders()).filter((l) => l.holder.startsWith(`${victim}/`)).map((l) => l.key);
    // The proxy's wake of the server, sent to the replica about to die.
    const woken = await call(victim, 'internal', `/api/v1/internal/servers/${server}/wake`, { method: 'POST', headers: json(proxy), body: JSON.stringify({ mc_uuid: randomUUID() }) });
    killedAt = Date.now();
    live.get(victim)!.kill();
    await live.get(victim)!.exited;

    step('killed; the upload goes on through the survivor');
    // The upload goes on through the survivor.
    let partsOnSurvivor = 1;
    while (offset < context.length) {
      await putPart(survivor);
      partsOnSurvivor += 1;
    }
    const completed = await call(survivor, 'external', `${upload}/complete`, { method: 'POST', headers: panel });
    if (completed.status !== 200) throw new Error(`complete: ${completed.status} ${completed.text}`);

    step(`waiting for ${heldByVictim.join(', ')} to move to ${survivor}`);
    // Every leader lease the victim held moves to the survivor.
    const takeoverSeconds: Record<string, number> = {};
    const deadline = killedAt + 4 * LEASE_SECONDS * 1000;
    while (Object.keys(takeoverSeconds).length < heldByVictim.length && Date.now() < deadline) {
      for (const lease of await leaders()) {
        if (heldByVictim.includes(lease.key) && takeoverSeconds[lease.key] === undefined && lease.holder.startsWith(`${survivor}/`)) {
          takeoverSeconds[lease.key] = (Date.now() - killedAt) / 1000;
        }
      }
      await sleep(100);
    }
    // The wake crosses the kill: the survivor's controller brings the server up.
    step(`waiting for ${server} to run through ${survivor}`);
    const until = async (pod: string, done: (s: { phase: string; ready: boolean }) => boolean, from: number, limitMs: number) => {
      while (Date.now() - from < limitMs) {
        const seen = await statusOf(pod);
        if (seen && done(seen)) return (Date.now() - from) / 1000;
        await sleep(100);
      }
      return null;
    };
    const runningSeconds = woken.status === 202 ? await until(survivor, (s) => s.phase === 'Running' && s.ready, killedAt, 6 * LEASE_SECONDS * 1000) : null;
    // A stop after the kill, sent to the survivor, is carried out by it (cleanly: save-all first).
    const stopAt = Date.now();
    const stopped = await call(survivor, 'external', `/api/v1/servers/${server}/stop`, { method: 'POST', headers: staff });
    const stopSeconds = stopped.status === 202 ? await until(survivor, (s) => s.phase === 'Stopped', stopAt, 6 * LEASE_SECONDS * 1000) : null;
    const wake = { status: woken.status, runningSeconds, stopStatus: stopped.status, stopSeconds, savedBeforeStop: rcon.game.received.includes('save-all flush') };

    const sinceKill = Date.now() - killedAt;
    if (sinceKill < loadMs) await sleep(loadMs - sinceKill);
    loading = false;
    await Promise.all(workers);

    // Nothing lost, nothing doubled: one submission, its context whole under its sha-256, no part left staged.
    const store = new ObjectContextStore(new S3BackupStore({ ...setup.s3, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', prefix: 'staging/' }));
    const stored = await store.open(id);
    const sha = createHash('sha256').update(context).digest('hex');
    const rows = await db.db.select({ sha: submissions.contextSha256 }).from(submissions);
    const uploadFigures = {
      bytes: context.length,
      sha256Matches: stored !== undefined && (await hashStream(stored)).sha256 === sha && rows[0]?.sha === sha,
      partsOnKilled,
      partsOnSurvivor,
      stagedLeft: await store.stagedBytes(id),
      submissionRows: rows.length,
    };

    step(`${victim} comes back`);
    // The killed replica comes back (same pod name) and takes its share.
    const restartAt = Date.now();
    const again = await spawnService(setup.command, args, env(victim));
    live.set(victim, again);
    const returnedSeconds = (Date.now() - restartAt) / 1000;
    let answeredAgain = 0;
    const of = 20;
    for (let i = 0; i < of; i++) {
      const res = await call(victim, i % 2 ? 'internal' : 'external', i % 2 ? '/api/v1/servers' : '/api/v1/me', { headers: i % 2 ? proxy : panel });
      if (res.status === 200) answeredAgain += 1;
    }
    const leftover = (await db.db.select({ holder: leases.holder }).from(leases)).filter((l) => l.holder.startsWith(`${victim}/`) && !again.lines.some((line) => line.replica === l.holder));

    return {
      ...figures,
      takeoverSeconds,
      leaseSeconds: LEASE_SECONDS,
      upload: uploadFigures,
      returned: { answered: answeredAgain, of, leftoverLeases: leftover.length, seconds: returnedSeconds },
      wake,
    };
  } finally {
    for (const proc of live.values()) proc.kill();
    await Promise.all([...live.values()].map((p) => p.exited));
    await db?.close();
    await cluster.stop();
  }
}

export interface WorldLockSetup {
  command: string;
  args: string[];
  databaseUrl: string;
  /** The DATA_DIR both replicas share (their world folders: the shared volume). */
  dataDir: string;
  /** The world's size, so that its backup is still running at the kill (default 96 MiB). */
  worldBytes?: number;
  step?: (what: string) => void;
}

/** The file writes tried on a world a dead process held, and what its lock would have held them off for. */
interface WritesAfterDeath {
  /** Writes refused (409 maintenance_in_progress) before the one that went through. */
  refusedBefore: number;
  /** Any other answer to a write (must be none). */
  wrong: Array<{ status: number; text: string }>;
  /** What the dead replica's lock would have held writes off for without the heartbeat. */
  lockLeaseSeconds: number;
  heartbeatTtlSeconds: number;
}

const writesAfterDeath = (): WritesAfterDeath => ({ refusedBefore: 0, wrong: [], lockLeaseSeconds: LOCK_LEASE_MS / 1000, heartbeatTtlSeconds: HEARTBEAT_TTL_MS / 1000 });

/** One file write on the world: true once it went through; a refusal or another answer is counted. */
async function tryWrite(port: number, server: string, headers: Record<string, string>, text: string, into: WritesAfterDeath): Promise<boolean> {
  const body = JSON.stringify({ content: Buffer.from(text).toString('base64') });
  const res = await send(port, `/api/v1/servers/${server}/file?path=after-kill.txt`, { method: 'PUT', headers, body });
  if (res.status === 200) return true;
  if (res.status === 409 && res.text.includes('maintenance_in_progress')) into.refusedBefore += 1;
  else into.wrong.push({ status: res.status, text: res.text });
  return false;
}

export interface WorldLockFigures extends WritesAfterDeath {
  /** Seconds from the kill until the survivor's file write went through (the victim's lock taken over). */
  lockTakenSeconds: number | null;
  /** Seconds from the kill until the victim's backup job was failed. */
  jobFailedSeconds: number | null;
}

/**
 * Issue 32's dead replica's world lock, on two service processes: one PostgreSQL database, one
 * DATA_DIR (their world folders: the volume they share), CLUSTER=simulated with the same server
 * created on each. A backup of a large world runs on one replica (its world lock held by its own
 * process) when that replica is SIGKILLed; the survivor's file writes are refused until its
 * heartbeat watch judges the victim dead, then go through, and the victim's job is failed.
 */
export async function runWorldLockFailover(setup: WorldLockSetup): Promise<WorldLockFigures> {
  const step = setup.step ?? (() => undefined);
  const env = (pod: string) => ({ DATABASE_URL: setup.databaseUrl, CLUSTER: 'simulated', DATA_DIR: setup.dataDir, POD_NAME: pod, LOG_LEVEL: 'info' });
  const live: ServiceProcess[] = [];
  let db: DatabaseHandle | undefined;
  try {
    const [victim, survivor] = await Promise.all(['felis-a', 'felis-b'].map((pod) => spawnService(setup.command, setup.args, env(pod))));
    live.push(victim!, survivor!);
    db = openPostgres(setup.databaseUrl);
    const deps = createTestDeps(db, { overrides: { clock: systemClock } });
    const operator = await createUser(deps, { role: 'admin' });
    const { headers: staff } = await signIn(deps, { userId: operator.id });
    const json = { ...staff, 'Content-Type': 'application/json' };
    // The same server in each replica's simulated cluster; its world folder is the shared one.
    const server = `wl-${randomBytes(3).toString('hex')}`;
    for (const proc of [victim!, survivor!]) {
      const made = await send(proc.externalPort, '/api/v1/servers', { method: 'POST', headers: json, body: JSON.stringify({ name: server, subdomain: server }) });
      if (made.status !== 201) throw new Error(`server: ${made.status} ${made.text}`);
    }
    const region = join(setup.dataDir, 'worlds', server, 'world', 'region');
    mkdirSync(region, { recursive: true });
    writeFileSync(join(region, 'r.0.0.mca'), randomBytes(setup.worldBytes ?? 96 * 1024 * 1024));
    // Each replica has read the other's heartbeat at least once (they beat every 2 s).
    await sleep(5_000);

    step(`backup of ${server} on felis-a, then SIGKILL felis-a while it holds the world`);
    const started = await send(victim!.externalPort, `/api/v1/servers/${server}/backup`, { method: 'POST', headers: staff });
    if (started.status !== 202) throw new Error(`backup: ${started.status} ${started.text}`);
    const lockKey = `world:${server}`;
    const [held] = await db.db.select({ holder: leases.holder, replica: leases.replica }).from(leases).where(eq(leases.key, lockKey));
    victim!.kill();
    const killedAt = Date.now();
    await victim!.exited;
    if (!held?.replica?.startsWith('felis-a/')) throw new Error(`the victim did not hold the world at the kill: ${JSON.stringify(held)}`);
    const [still] = await db.db.select({ holder: leases.holder }).from(leases).where(eq(leases.key, lockKey));
    if (still?.holder !== held.holder) throw new Error('the backup ended before the kill: give the world more bytes');

    step('killed; the survivor writes until it may');
    const figures: WorldLockFigures = { lockTakenSeconds: null, jobFailedSeconds: null, ...writesAfterDeath() };
    while (Date.now() - killedAt < LOCK_LEASE_MS + 10_000 && (figures.lockTakenSeconds === null || figures.jobFailedSeconds === null)) {
      if (figures.lockTakenSeconds === null && (await tryWrite(survivor!.externalPort, server, json, 'written after the kill\n', figures))) {
        figures.lockTakenSeconds = (Date.now() - killedAt) / 1000;
      }
      if (figures.jobFailedSeconds === null) {
        const [job] = await db.db.select({ state: worldJobs.state }).from(worldJobs).where(eq(worldJobs.id, held.holder));
        if (job?.state === 'failed') figures.jobFailedSeconds = (Date.now() - killedAt) / 1000;
      }
      await sleep(200);
    }
    return figures;
  } finally {
    for (const proc of live) proc.kill();
    await Promise.all(live.map((p) => p.exited));
    await db?.close();
  }
}

export interface KilledRunFigures extends WritesAfterDeath {
  /** Seconds from the restarted service's `listening` until the dead life's world lock was gone. */
  lockGoneSeconds: number | null;
  /** …until a file write on the world went through. */
  writeSeconds: number | null;
  /** …until the dead life's backup job was failed. */
  jobFailedSeconds: number | null;
  /** …until the schedule's run was no longer in progress, and how it ended. */
  runEndedSeconds: number | null;
  runResult: string | null;
  runDetail: string | null;
}

/**
 * Issue 43 item 6: the service process is SIGKILLed while a scheduled backup (run now) holds the
 * world, between the run's steps, then started again on the same PostgreSQL database and DATA_DIR,
 * as a restart does (no POD_NAME: the new life cannot tell its previous one apart from another
 * replica, and judges it dead by its heartbeat). Measures how long the dead life's lock, job and
 * run outlive it. The simulated cluster of a PostgreSQL service keeps no servers across the
 * restart, so the server (staff's, unclaimed) is made again under its name on the new life.
 */
export async function runKilledScheduledBackup(setup: WorldLockSetup): Promise<KilledRunFigures> {
  const step = setup.step ?? (() => undefined);
  const env = { DATABASE_URL: setup.databaseUrl, CLUSTER: 'simulated', DATA_DIR: setup.dataDir, LOG_LEVEL: 'info', SCHEDULE_TICK_SECONDS: '5' };
  const live: ServiceProcess[] = [];
  let db: DatabaseHandle | undefined;
  try {
    const first = await spawnService(setup.command, setup.args, env);
    live.push(first);
    db = openPostgres(setup.databaseUrl);
    const deps = createTestDeps(db, { overrides: { clock: systemClock } });
    const operator = await createUser(deps, { role: 'admin' });
    const { headers: staff } = await signIn(deps, { userId: operator.id });
    const json = { ...staff, 'Content-Type': 'application/json' };
    const server = `kr-${randomBytes(3).toString('hex')}`;
    const create = async (proc: ServiceProcess) => {
      const made = await send(proc.externalPort, '/api/v1/servers', { method: 'POST', headers: json, body: JSON.stringify({ name: server, subdomain: server }) });
      if (made.status !== 201) throw new Error(`server: ${made.status} ${made.text}`);
    };
    await create(first);
    const region = join(setup.dataDir, 'worlds', server, 'world', 'region');
    mkdirSync(region, { recursive: true });
    writeFileSync(join(region, 'r.0.0.mca'), randomBytes(setup.worldBytes ?? 96 * 1024 * 1024));
    const made = await send(first.externalPort, `/api/v1/servers/${server}/schedules`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ action: 'backup', minute_of_day: 0, weekdays: 127, timezone: 'UTC' }),
    });
    if (made.status !== 201) throw new Error(`schedule: ${made.status} ${made.text}`);
    const { id } = JSON.parse(made.text) as { id: number };

    step(`scheduled backup of ${server} run now, then SIGKILL while it holds the world`);
    const ran = await send(first.externalPort, `/api/v1/servers/${server}/schedules/${id}/run`, { method: 'POST', headers: staff });
    if (ran.status !== 202) throw new Error(`run: ${ran.status} ${ran.text}`);
    const lockKey = `world:${server}`;
    let held: { holder: string; purpose: string } | undefined;
    for (let waited = 0; !held && waited < 20_000; waited += 50) {
      [held] = await db.db.select({ holder: leases.holder, purpose: leases.purpose }).from(leases).where(eq(leases.key, lockKey));
      if (!held) await sleep(50);
    }
    first.kill();
    await first.exited;
    if (held?.purpose !== 'backup') throw new Error(`the run's backup did not hold the world at the kill: ${JSON.stringify(held)}`);
    const [still] = await db.db.select({ holder: leases.holder }).from(leases).where(eq(leases.key, lockKey));
    if (still?.holder !== held.holder) throw new Error('the backup ended before the kill: give the world more bytes');

    step('killed; the service starts again');
    const second = await spawnService(setup.command, setup.args, env);
    live.push(second);
    const restartedAt = Date.now();
    await create(second);
    const figures: KilledRunFigures = { lockGoneSeconds: null, writeSeconds: null, jobFailedSeconds: null, runEndedSeconds: null, runResult: null, runDetail: null, ...writesAfterDeath() };
    const since = () => (Date.now() - restartedAt) / 1000;
    const done = () => figures.lockGoneSeconds !== null && figures.writeSeconds !== null && figures.jobFailedSeconds !== null && figures.runEndedSeconds !== null;
    while (since() < LOCK_LEASE_MS / 1000 + 15 && !done()) {
      if (figures.lockGoneSeconds === null) {
        const [lock] = await db.db.select({ holder: leases.holder }).from(leases).where(eq(leases.key, lockKey));
        if (lock?.holder !== held.holder) figures.lockGoneSeconds = since();
      }
      if (figures.jobFailedSeconds === null) {
        const [job] = await db.db.select({ state: worldJobs.state }).from(worldJobs).where(eq(worldJobs.id, held.holder));
        if (job?.state === 'failed') figures.jobFailedSeconds = since();
      }
      if (figures.runEndedSeconds === null) {
        const [run] = await db.db
          .select({ state: serverSchedules.runState, result: serverSchedules.lastResult, detail: serverSchedules.lastDetail })
          .from(serverSchedules)
          .where(eq(serverSchedules.id, id));
        if (run && !run.state) Object.assign(figures, { runEndedSeconds: since(), runResult: run.result, runDetail: run.detail });
      }
      if (figures.writeSeconds === null && (await tryWrite(second.externalPort, server, json, 'written after the restart\n', figures))) figures.writeSeconds = since();
      await sleep(250);
    }
    return figures;
  } finally {
    for (const proc of live) proc.kill();
    await Promise.all(live.map((p) => p.exited));
    await db?.close();
  }
}

export interface ContextAcrossSetup {
  command: string;
  args: string[];
  databaseUrl: string;
  s3: { endpoint: string; bucket: string };
  dataDirs: [string, string];
}

/**
 * Issue 43 item 13, the hidden run's case on two service processes (one PostgreSQL database, one
 * S3 server, each its own DATA_DIR): a submission context in parts, part 1 on A, part 2 on B,
 * part 3 on A, completed on A. Answers each answer's status and the stored context's sha-256.
 */
export async function runContextAcrossReplicas(setup: ContextAcrossSetup): Promise<{ statuses: string[]; stored: string | null; sent: string; bytes: number }> {
  const env = (dataDir: string) => ({
    DATABASE_URL: setup.databaseUrl,
    CLUSTER: 'simulated',
    DATA_DIR: dataDir,
    BACKUP_S3_BUCKET: setup.s3.bucket,
    BACKUP_S3_ENDPOINT: setup.s3.endpoint,
    BACKUP_S3_ACCESS_KEY_ID: 'S3RVER',
    BACKUP_S3_SECRET_ACCESS_KEY: 'S3RVER',
  });
  const live: ServiceProcess[] = [];
  let db: DatabaseHandle | undefined;
  try {
    const [a, b] = await Promise.all(setup.dataDirs.map((dir) => spawnService(setup.command, setup.args, env(dir))));
    live.push(a!, b!);
    db = openPostgres(setup.databaseUrl);
    const deps = createTestDeps(db, { overrides: { clock: systemClock } });
    const { headers: panel } = await signIn(deps, { userId: (await createUser(deps)).id });
    const PART = 256 * 1024;
    const context = randomBytes(PART * 2 + 4321);
    const statuses: string[] = [];
    const made = await send(a!.externalPort, '/api/v1/me/submissions', { method: 'POST', headers: { ...panel, 'Content-Type': 'application/json' }, body: JSON.stringify({ display_name: 'Across replicas' }) });
    statuses.push(`create A ${made.status}`);
    const { id } = JSON.parse(made.text) as { id: string };
    const upload = `/api/v1/me/submissions/${id}/context/upload`;
    let offset = 0;
    for (const [name, proc] of [['A', a!], ['B', b!], ['A', a!]] as const) {
      const part = context.subarray(offset, offset + PART);
      const res = await send(proc.externalPort, `${upload}?offset=${offset}`, {
        method: 'PUT',
        headers: { ...panel, 'Content-Type': 'application/octet-stream', 'Content-Digest': `sha-256=:${createHash('sha256').update(part).digest('base64')}:` },
        body: new Uint8Array(part),
      });
      statuses.push(`part at ${offset} on ${name} ${res.status}${res.status === 200 ? '' : ` ${res.text}`}`);
      offset += part.length;
    }
    const completed = await send(a!.externalPort, `${upload}/complete`, { method: 'POST', headers: panel });
    statuses.push(`complete on A ${completed.status}${completed.status === 200 ? '' : ` ${completed.text}`}`);
    const [row] = await db.db.select({ sha: submissions.contextSha256 }).from(submissions).where(eq(submissions.id, id));
    return { statuses, stored: row?.sha ?? null, sent: createHash('sha256').update(context).digest('hex'), bytes: context.length };
  } finally {
    for (const proc of live) proc.kill();
    await Promise.all(live.map((p) => p.exited));
    await db?.close();
  }
}
