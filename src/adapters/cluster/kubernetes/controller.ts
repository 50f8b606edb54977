import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../../../lib/clock.js';
import type { Logger } from '../../../lib/logger.js';
import { RconConnection, type RconEndpoint } from '../../rcon/client.js';
import { parsePlayerList, type PlayerCount } from '../../rcon/players.js';
import { ClusterNotFoundError, type ClusterTask, type ClusterTaskDeps, type LeaderLock } from '../types.js';
import { podName, type KubernetesCluster } from './adapter.js';
import type { ClusterCaches } from './informers.js';
import { LEASE_TIMING, LeaseLock } from './lease.js';
import { WorkQueue } from './work-queue.js';
import {
  DEFAULT_PLAYERS_MAX,
  DEFAULT_READINESS_TIMEOUT_SECONDS,
  DEFAULT_START_TIMEOUT_SECONDS,
  effectiveIdleStopSeconds,
  SERVER_FINALIZER,
  type Condition,
  type MinecraftServer,
  type MinecraftServerStatus,
} from './resource.js';
import { appliedStatefulSet, carriesCurrentTemplate, serviceFor, specProblem } from './workloads.js';

/** An authenticated RCON connection (src/adapters/rcon's client). */
export interface RconSession {
  command(text: string): Promise<string>;
  close(): void;
}

/** Opens a connection: TCP accept, then the password accepted, within `timeoutMs`; rejects otherwise. */
export type RconOpener = (endpoint: RconEndpoint, timeoutMs: number) => Promise<RconSession>;

export interface LifecycleOptions {
  cluster: KubernetesCluster;
  /** Only while this replica leads does it act (a Lease on Kubernetes: lease.ts). */
  lock: LeaderLock;
  rcon: RconOpener;
  clock: Clock;
  log: Logger;
  /** Servers reconciled at once (each server by one worker at a time). */
  workers?: number;
  /** How often leadership is taken or renewed (the lock's own timer where it has one). */
  leaseRetryMs?: number;
  /** Every server is looked at again this often even when nothing about it changed. */
  resyncMs?: number;
  /** How often a running server's RCON is probed; a starting one's every `startProbeMs`. */
  probeIntervalMs?: number;
  startProbeMs?: number;
  /** Pod recreations of one start before it gives up. */
  maxAutoRestarts?: number;
  /** The first back-off after a start time-out; each next one doubles. */
  restartBackoffMs?: number;
  /** Idle stop never happens this soon after the server was first ready. */
  idleGraceMs?: number;
  /** Where `felis_lifecycle_*` metrics go; none when unset. */
  registry?: Registry;
  /**
   * Removes the service's database rows of a server deleted in the cluster (ClusterTaskDeps
   * `forgetServer`); the finalizer lets the resource go only once it resolved. None: nothing to remove.
   */
  forgetServer?: (name: string) => Promise<void>;
}

/** Pod waiting reasons that no retry can cure: the start gives up at once. */
const HOPELESS_REASONS = new Set(['InvalidImageName', 'CreateContainerConfigError', 'ErrImageNeverPull']);
const STOP_WARNING = 'say This server is stopping now. The world is being saved.';
/** Why a start gives up while the operator has not accepted the game's EULA. */
export const EULA_REFUSAL =
  'cannot start: the Minecraft EULA (https://aka.ms/MinecraftEULA) is not accepted for this cluster; read it, then set KUBE_EULA=true on the service and wake the server again';

type StatusPatch = { [K in keyof MinecraftServerStatus]?: MinecraftServerStatus[K] | null };
/** The Ready condition's reason (and message) where the step that sets it knows better than the phase. */
type ReadyHint = { reason: string; message?: string };

/** A probe's result, for the pod it reached (a new pod is probed afresh). */
interface ProbeResult {
  podUid: string;
  reachable: boolean;
  players?: PlayerCount;
  /** performance.now() when it finished. */
  at: number;
}

interface Observed {
  server: MinecraftServer;
  set: V1StatefulSet | undefined;
  pod: V1Pod | undefined;
  hasService: boolean;
}

/**
 * The lifecycle controller: makes each MinecraftServer's StatefulSet and Service, starts and stops
 * its pod as `desiredState` asks, supervises starts (time-outs, recreations, giving up), reads
 * readiness and players over RCON, stops empty servers, and retires.
 *
 * Shaped as a client-go controller: it reads only watch-fed caches (informers.ts), never a list or
 * GET per pass; each change (a watch event, a wake or stop from the API, a probe whose result
 * changed) queues only the server it concerns in a work queue (work-queue.ts) that several
 * workers drain, one server per worker at a time, a failure coming back after a doubling back-off;
 * time-driven steps (a start's time-out, a back-off's end, idle stop) queue the server for when
 * they fall due, and every server is looked at again each resync period. RCON probes run on their
 * own, concurrently, each within its own deadline, off the reconcile path: a reconcile reads the
 * last result, so a hung game slows only its own probes. Status is written only when it changes
 * by value. Level-triggered: each reconcile compares what is with what is asked (a StatefulSet
 * scaled by hand is scaled back), so a reconcile missed on one replica is made up by the next
 * leader's first look at every server.
 */
export class LifecycleController {
  readonly #o: Required<Omit<LifecycleOptions, 'registry' | 'forgetServer'>> & Pick<LifecycleOptions, 'forgetServer'>;
  readonly #leaderGauge: Gauge | undefined;
  readonly #gaveUp: Counter<'reason'> | undefined;
  readonly #reconcileSeconds: Histogram | undefined;
  readonly #requeues: Counter | undefined;
  readonly #apiRequests: Counter<'verb'> | undefined;
  readonly #probeResults: Counter<'result'> | undefined;
  readonly #probes = new Map<string, ProbeResult>();
  readonly #probing = new Map<string, Promise<void>>();
  /** Servers (name → uid) whose finalizer this replica removed, until the watch brings their deletion. */
  readonly #finalized = new Map<string, string | undefined>();
  #queue: WorkQueue | undefined;
  #leaseTimer: NodeJS.Timeout | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #stopCacheEvents: (() => void) | undefined;
  #leading = false;
  #started = false;
  /** Reconciles done while leading (tests count them to show two replicas never both act). */
  passesActed = 0;

  constructor(options: LifecycleOptions) {
    this.#o = {
      workers: 4,
      leaseRetryMs: 2_000,
      resyncMs: 60_000,
      probeIntervalMs: 10_000,
      startProbeMs: 2_000,
      maxAutoRestarts: 3,
      restartBackoffMs: 10_000,
      idleGraceMs: 180_000,
      ...options,
    };
    const registers = options.registry ? [options.registry] : [];
    if (options.registry) {
      this.#leaderGauge = new Gauge({ name: 'felis_lifecycle_leader', help: '1 while this replica leads the lifecycle controller.', registers });
      this.#gaveUp = new Counter({ name: 'felis_lifecycle_starts_given_up_total', help: 'Server starts that gave up, by reason.', labelNames: ['reason'], registers });
      this.#reconcileSeconds = new Histogram({
        name: 'felis_lifecycle_reconcile_duration_seconds',
        help: 'Time one reconcile of one server took.',
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers,
      });
      this.#requeues = new Counter({ name: 'felis_lifecycle_requeues_total', help: 'Reconciles that failed and were queued again after a back-off.', registers });
      this.#apiRequests = new Counter({ name: 'felis_lifecycle_api_requests_total', help: 'Requests the lifecycle controller sent to the Kubernetes API, by verb.', labelNames: ['verb'], registers });
      this.#probeResults = new Counter({ name: 'felis_lifecycle_probes_total', help: 'RCON probes of the servers, by result.', labelNames: ['result'], registers });
      const queue = () => this.#queue;
      new Gauge({ name: 'felis_lifecycle_queue_depth', help: 'Servers waiting in the work queue.', registers, collect() { this.set(queue()?.depth ?? 0); } });
    }
  }

  get #caches(): ClusterCaches {
    return this.#o.cluster.caches;
  }

  #work(): WorkQueue {
    this.#queue ??= new WorkQueue({
      workers: this.#o.workers,
      handle: (name) => this.#reconcileOne(name),
      onError: (name, err) => {
        // A reconcile cut short by a step-down is no failure: the next leader looks again.
        if (err instanceof NotLeadingError) return this.#o.log.debug({ server: name }, 'lifecycle controller: reconcile stopped at a step-down');
        this.#requeues?.inc();
        this.#o.log.warn({ err, server: name }, 'lifecycle controller: reconcile failed');
      },
      onHandled: (_name, seconds) => this.#reconcileSeconds?.observe(seconds),
    });
    return this.#queue;
  }

  /** A server's desired state changed over the API (a wake or a stop): that server is looked at now. */
  kick(name?: string): void {
    if (!this.#leading) return;
    if (name) this.#work().add(name);
    else for (const server of this.#caches.list('servers')) this.#work().add(server.metadata.name);
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#caches.start();
    this.#stopCacheEvents = this.#caches.onChange((kind, name) => {
      if (kind === 'pods') this.#probes.delete(name);
      if (this.#leading) this.#work().add(name);
    });
    const lead = () => {
      void this.#lead().finally(() => {
        const next = Math.min(this.#o.leaseRetryMs, this.#o.lock.nextTryInMs?.() ?? Infinity);
        if (this.#started) this.#leaseTimer = setTimeout(lead, next).unref();
      });
    };
    lead();
    this.#resyncTimer = setInterval(() => this.kick(), this.#o.resyncMs).unref();
    this.#probeTimer = setInterval(() => this.#probeDue(), Math.min(1_000, this.#o.startProbeMs)).unref();
  }

  async stop(): Promise<void> {
    this.#started = false;
    clearTimeout(this.#leaseTimer);
    clearInterval(this.#resyncTimer);
    clearInterval(this.#probeTimer);
    this.#stopCacheEvents?.();
    // Probes under way end by their own deadline; their results are no longer acted on.
    await this.#stepDown();
    await this.#o.lock.release();
    this.#leaderGauge?.set(0);
  }

  /** Takes or renews the leadership; starts the work when it begins leading and stops it when it ends. */
  async #lead(): Promise<boolean> {
    const leading = await this.#o.lock.acquire();
    this.#leaderGauge?.set(leading ? 1 : 0);
    if (leading === this.#leading) return leading;
    this.#o.log.info({}, leading ? 'lifecycle controller: leading' : 'lifecycle controller: standing by');
    if (leading) {
      this.#leading = true;
      this.#caches.start();
      await this.#synced();
      this.#work().run();
      // Every server, those whose desired state is not reached first (a wake the last leader
      // left pending is carried out before the look at every server at rest).
      const servers = this.#caches.list('servers');
      for (const server of [...servers.filter(pending), ...servers.filter((s) => !pending(s))]) this.#work().add(server.metadata.name);
    } else {
      await this.#stepDown();
    }
    return leading;
  }

  /** Stops acting at once: no new reconcile starts, those under way stop before their next write. */
  async #stepDown(): Promise<void> {
    this.#leading = false;
    await this.#queue?.pause();
    this.#probes.clear();
  }

  async #synced(): Promise<void> {
    while (!this.#caches.synced()) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /**
   * Everything at once, for tests and operators' tools: takes the lead if it can, brings the
   * caches up to the API server's state now (one list per kind: a barrier, not the way the
   * controller runs), probes every server that runs a pod, and reconciles every server; resolves
   * when all of it is done.
   */
  async tick(): Promise<void> {
    if (!(await this.#lead())) return;
    await this.#work().drained();
    await this.#o.cluster.catchUp();
    await Promise.all(this.#probeCandidates().map((name) => this.#probe(name)));
    this.kick();
    await this.#work().drained();
  }

  // ---- probes ----

  /** Servers whose pod runs while they start or run: RCON may answer. */
  #probeCandidates(): string[] {
    const names: string[] = [];
    for (const server of this.#caches.list('servers')) {
      const phase = server.status?.phase;
      if (server.spec.desiredState !== 'Running' || server.spec.retired || (phase !== 'Starting' && phase !== 'Running')) continue;
      const pod = this.#podOf(server.metadata.name);
      if (pod && podRunning(pod)) names.push(server.metadata.name);
    }
    return names;
  }

  /** Starts the probes that are due, each on its own (a hung one holds only its own server's next probe). */
  #probeDue(): void {
    if (!this.#leading) return;
    const now = performance.now();
    for (const name of this.#probeCandidates()) {
      if (this.#probing.has(name)) continue;
      const last = this.#probes.get(name);
      const every = this.#caches.get('servers', name)?.status?.phase === 'Running' ? this.#o.probeIntervalMs : this.#o.startProbeMs;
      if (last && now - last.at < every) continue;
      void this.#probe(name);
    }
  }

  /** One probe of a server's RCON (TCP accept, password accepted, then `list`) within its deadline; a changed result queues the server. */
  #probe(name: string): Promise<void> {
    const running = this.#probing.get(name);
    if (running) return running;
    const probe = (async () => {
      const server = this.#caches.get('servers', name);
      const pod = this.#podOf(name);
      if (!server || !pod?.metadata?.uid) return;
      let result: ProbeResult;
      try {
        const session = await this.#open(server);
        try {
          let players: PlayerCount | undefined;
          try {
            players = parsePlayerList(await session.command('list'));
          } catch {
            players = undefined;
          }
          result = { podUid: pod.metadata.uid, reachable: true, ...(players ? { players } : {}), at: performance.now() };
        } finally {
          session.close();
        }
      } catch {
        result = { podUid: pod.metadata.uid, reachable: false, at: performance.now() };
      }
      this.#probeResults?.inc({ result: result.reachable ? (result.players ? 'answered' : 'players_unknown') : 'unreachable' });
      const before = this.#probes.get(name);
      this.#probes.set(name, result);
      const same =
        before?.podUid === result.podUid &&
        before.reachable === result.reachable &&
        before.players?.online === result.players?.online &&
        before.players?.max === result.players?.max;
      if (!same && this.#leading) this.#work().add(name);
    })().finally(() => this.#probing.delete(name));
    this.#probing.set(name, probe);
    return probe;
  }

  /** The last probe of the server's current pod, if there is one. */
  #probeOf(name: string, pod: V1Pod | undefined): ProbeResult | undefined {
    const result = this.#probes.get(name);
    return result && pod?.metadata?.uid === result.podUid ? result : undefined;
  }

  // ---- reconcile ----

  #podOf(name: string): V1Pod | undefined {
    return this.#caches.get('pods', podName(name));
  }

  async #reconcileOne(name: string): Promise<void> {
    // The lease, not only the last leadership round's word: a renewal hanging on a cut API server
    // keeps that round from returning while the lease has lapsed, and a pass begun then would only
    // be refused at its first write (a new leader adds every server again).
    if (!this.#leading || !this.#o.lock.holds()) return;
    const server = this.#caches.get('servers', name);
    if (!server) {
      this.#probes.delete(name);
      this.#finalized.delete(name);
      return;
    }
    this.passesActed += 1;
    await this.#reconcile({
      server: structuredClone(server),
      set: this.#caches.get('statefulsets', name),
      pod: this.#podOf(name),
      hasService: this.#caches.get('services', name) !== undefined,
    });
  }

  /** Throws when this replica no longer leads: the reconcile stops before its next write. */
  #mayWrite(): void {
    if (!this.#leading || !this.#o.lock.holds()) throw new NotLeadingError('this replica no longer leads');
  }

  async #reconcile({ server, set, pod, hasService }: Observed): Promise<void> {
    const { cluster } = this.#o;
    const { name } = server.metadata;
    const status = server.status ?? {};
    if (server.metadata.deletionTimestamp) return this.#finalize(server, set, pod);
    if (!server.metadata.finalizers?.includes(SERVER_FINALIZER)) await this.#setFinalizers(server, [...(server.metadata.finalizers ?? []), SERVER_FINALIZER]);
    if (server.spec.retired) return this.#retire(server, set, pod);
    if (!hasService) {
      this.#mayWrite();
      this.#count('apply');
      this.#caches.assume('services', await cluster.applyService(serviceFor(server, cluster.crd)));
    }
    const problem = specProblem(server);
    if (!set && !problem) set = await this.#applySet(server, undefined, 0);
    const phase = status.phase ?? 'Stopped';

    if (server.spec.desiredState !== 'Running') {
      if (phase === 'Running' && pod && podRunning(pod)) await this.#cleanStop(server);
      // Drift: a set scaled up by someone else while the server is to be stopped goes back to 0.
      if (set && set.spec?.replicas !== 0) {
        if (phase === 'Stopped') await this.#event(server, 'Warning', 'ScaledBack', `${name}'s StatefulSet was scaled to ${set.spec?.replicas} while the server is Stopped; scaled back to 0`);
        else await this.#event(server, 'Normal', 'Stopping', pod ? `pod ${pod.metadata?.name} saved and stopping: scaled ${name} to 0` : `scaled ${name} to 0 to stop it`);
        await this.#applySet(server, set, 0);
      }
      if (pod) return this.#sync(server, pod, { phase: 'Stopping', ready: false });
      return this.#sync(server, pod, {
        phase: 'Stopped',
        ready: false,
        players: { online: 0, max: status.players?.max ?? DEFAULT_PLAYERS_MAX },
        autoRestarts: 0,
        startGaveUp: false,
        startedAt: null,
        firstReadyAt: null,
        emptySince: null,
        retryAt: null,
      });
    }

    if (phase === 'Failed' && status.startGaveUp) {
      if (set && set.spec?.replicas !== 0) await this.#applySet(server, set, 0);
      return this.#sync(server, pod, {});
    }
    const hopeless = problem ?? this.#hopelessPod(pod);
    if (hopeless) return this.#giveUp(server, set, pod, 'InvalidSpec', hopeless);
    if (phase === 'Starting') return this.#superviseStart(server, set, pod);
    if (phase === 'Running') return this.#superviseRunning(server, set, pod);
    // Stopped, Stopping, Unknown, or Failed with budget left: a fresh start, on the spec as it is now;
    // only once the operator accepted the game's EULA (KUBE_EULA=true), else it gives up saying so.
    if (!cluster.eula) return this.#giveUp(server, set, pod, 'EulaNotAccepted', EULA_REFUSAL);
    await this.#startSet(server, set);
    await this.#event(server, 'Normal', 'Starting', `scaled ${name} to 1 to start it`);
    await this.#sync(server, pod, {
      phase: 'Starting',
      ready: false,
      autoRestarts: 0,
      startGaveUp: false,
      startedAt: this.#now().toISOString(),
      firstReadyAt: null,
      emptySince: null,
      retryAt: null,
    });
    this.#requeueAt(name, this.#startDeadline(server));
  }

  /**
   * A start: the set at one replica, with the pod template of the spec as it is now. A spec that
   * changed since the set was made (image, memory, resources) goes into the template here, before
   * the start, never under a running server. The world volume's size is in the claim template,
   * which Kubernetes does not let change.
   */
  async #startSet(server: MinecraftServer, set: V1StatefulSet | undefined): Promise<void> {
    const rolls = set !== undefined && !carriesCurrentTemplate(server, set, this.#o.cluster.eula);
    if (!rolls && set?.spec?.replicas === 1) return;
    await this.#applySet(server, set, 1, true);
    if (rolls) this.#o.log.info({ server: server.metadata.name, image: server.spec.image }, 'lifecycle controller: the spec change goes into the StatefulSet before this start');
  }

  /**
   * The controller's one write of a StatefulSet: server-side apply of the whole set it owns, with
   * `replicas`; the template is the spec's current one only on a start (`roll`) or a new set.
   */
  async #applySet(server: MinecraftServer, set: V1StatefulSet | undefined, replicas: number, roll = false): Promise<V1StatefulSet> {
    this.#mayWrite();
    this.#count('apply');
    const { cluster } = this.#o;
    return this.#caches.assume('statefulsets', await cluster.applyStatefulSet(appliedStatefulSet(server, cluster.crd, replicas, set, roll, cluster.eula)));
  }

  async #superviseStart(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const { cluster, maxAutoRestarts, restartBackoffMs } = this.#o;
    const { name } = server.metadata;
    const status = server.status ?? {};
    const now = this.#now();
    if (status.retryAt) {
      const retryAt = Date.parse(status.retryAt);
      if (now.getTime() < retryAt) {
        this.#requeueAt(name, retryAt);
        return this.#sync(server, pod, {});
      }
      // The back-off is over: a new pod, and the start's clock begins again.
      this.#mayWrite();
      this.#count('delete');
      await cluster.deletePod(podName(name));
      this.#probes.delete(name);
      await this.#sync(server, undefined, { retryAt: null, startedAt: now.toISOString() });
      this.#requeueAt(name, this.#startDeadline(server));
      return;
    }
    // A set at 0 under a start (a wake after a start gave up, a hand scale-down) is a start again: on the spec as it is now.
    if (set?.spec?.replicas !== 1) {
      if (!cluster.eula) return this.#giveUp(server, set, pod, 'EulaNotAccepted', EULA_REFUSAL);
      await this.#startSet(server, set);
    }
    const probe = this.#probeOf(name, pod);
    if (pod && podRunning(pod) && probe?.reachable) {
      await this.#event(server, 'Normal', 'Ready', `RCON answered in pod ${pod.metadata?.name}: the server is running`);
      return this.#sync(server, pod, {
        phase: 'Running',
        ready: podReady(pod),
        firstReadyAt: status.firstReadyAt ?? now.toISOString(),
        emptySince: probe.players?.online === 0 ? now.toISOString() : null,
        players: playersStatus(probe.players, status),
        endpoint: { mode: 'service', address: `${name}.${cluster.namespace}.svc:25565` },
      });
    }
    const deadline = this.#startDeadline(server);
    if (now.getTime() < deadline) {
      this.#requeueAt(name, deadline);
      return this.#sync(server, pod, status.startedAt ? {} : { startedAt: now.toISOString() });
    }
    const restarts = status.autoRestarts ?? 0;
    if (restarts >= maxAutoRestarts) return this.#giveUp(server, set, pod, 'StartTimedOut', `not ready after ${restarts + 1} attempts`);
    this.#o.log.info({ server: name, attempt: restarts + 1 }, 'start timed out; the pod is recreated after a back-off');
    await this.#event(server, 'Warning', 'StartTimedOut', `pod ${podName(name)} not ready in time (attempt ${restarts + 1}); it is recreated after a back-off`);
    const retryAt = now.getTime() + restartBackoffMs * 2 ** restarts;
    await this.#sync(server, pod, { autoRestarts: restarts + 1, retryAt: new Date(retryAt).toISOString() }, { reason: 'StartTimedOut' });
    this.#requeueAt(name, retryAt);
  }

  #startDeadline(server: MinecraftServer): number {
    const startedAt = server.status?.startedAt ? Date.parse(server.status.startedAt) : this.#now().getTime();
    return startedAt + (server.spec.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS) * 1000;
  }

  async #superviseRunning(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const status = server.status ?? {};
    const { name } = server.metadata;
    const now = this.#now();
    // Drift: a running server's set scaled down by someone else comes back.
    if (set && set.spec?.replicas !== 1) await this.#applySet(server, set, 1);
    if (!pod || !podRunning(pod)) {
      // The pod went away under a running server: supervise its return as a start.
      await this.#sync(server, pod, { phase: 'Starting', ready: false, startedAt: now.toISOString(), retryAt: null });
      this.#requeueAt(name, this.#startDeadline(server));
      return;
    }
    const probe = this.#probeOf(name, pod);
    if (!probe) return this.#sync(server, pod, { ready: status.ready === true && podReady(pod) });
    if (this.#idleDue(server, probe.players) && (await this.#idleStop(server))) {
      this.#mayWrite();
      this.#count('patch');
      this.#caches.assume('servers', await this.#o.cluster.patchServerSpec(name, { desiredState: 'Stopped' }));
      if (set) await this.#applySet(server, set, 0);
      await this.#event(server, 'Normal', 'IdleStopped', `pod ${pod.metadata?.name} empty for its idle period: stopped`);
      return this.#sync(server, pod, { phase: 'Stopping', ready: false }, { reason: 'IdleStopped' });
    }
    const empty = probe.players?.online === 0;
    const emptySince = empty ? (status.emptySince ?? now.toISOString()) : probe.players ? null : (status.emptySince ?? null);
    await this.#sync(server, pod, {
      ready: probe.reachable && podReady(pod),
      players: playersStatus(probe.players, status),
      emptySince,
    });
    const idleAt = this.#idleAt(server, emptySince);
    if (idleAt !== undefined) this.#requeueAt(name, idleAt);
  }

  /** When an empty server falls due for idle stop (undefined: it does not). */
  #idleAt(server: MinecraftServer, emptySince: string | null | undefined): number | undefined {
    const idleSeconds = effectiveIdleStopSeconds(server);
    const firstReadyAt = server.status?.firstReadyAt;
    if (idleSeconds <= 0 || !emptySince || !firstReadyAt) return undefined;
    return Math.max(Date.parse(firstReadyAt) + this.#o.idleGraceMs, Date.parse(emptySince) + idleSeconds * 1000);
  }

  #idleDue(server: MinecraftServer, players: PlayerCount | undefined): boolean {
    // An unreadable count pauses idle stop: an empty server is never assumed.
    if (players?.online !== 0) return false;
    const at = this.#idleAt(server, server.status?.emptySince);
    return at !== undefined && this.#now().getTime() >= at;
  }

  /** The idle stop's commands, asked only if `list` still says nobody is there. */
  async #idleStop(server: MinecraftServer): Promise<boolean> {
    try {
      const session = await this.#open(server);
      try {
        const players = parsePlayerList(await session.command('list'));
        if (players?.online !== 0) return false;
        this.#o.log.info({ server: server.metadata.name }, 'idle stop: empty for its idle period');
        await stopCommands(session);
        return true;
      } finally {
        session.close();
      }
    } catch (err) {
      this.#o.log.warn({ err, server: server.metadata.name }, 'idle stop: RCON unavailable; the server keeps running');
      return false;
    }
  }

  async #open(server: MinecraftServer): Promise<RconSession> {
    const endpoint = await this.#o.cluster.rconEndpoint(server.metadata.name);
    return this.#o.rcon(endpoint, (server.spec.readinessTimeoutSeconds ?? DEFAULT_READINESS_TIMEOUT_SECONDS) * 1000);
  }

  /** Warns the players and flushes the world to disk before the pod is scaled away. */
  async #cleanStop(server: MinecraftServer): Promise<void> {
    try {
      const session = await this.#open(server);
      try {
        await stopCommands(session);
      } finally {
        session.close();
      }
    } catch (err) {
      // The pod's own SIGTERM handler still saves the world; the stop goes on.
      this.#o.log.warn({ err, server: server.metadata.name }, 'clean stop: RCON unavailable; stopping anyway');
    }
  }

  async #giveUp(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined, reason: string, message: string): Promise<void> {
    const status = server.status ?? {};
    if (set && set.spec?.replicas !== 0) await this.#applySet(server, set, 0);
    this.#o.log.warn({ server: server.metadata.name, reason, message }, 'start gave up');
    this.#gaveUp?.inc({ reason });
    await this.#event(server, 'Warning', 'StartGaveUp', `${reason}: ${message}`);
    await this.#sync(
      server,
      pod,
      { phase: 'Failed', ready: false, startGaveUp: true, autoRestarts: status.autoRestarts ?? 0, retryAt: null },
      { reason, message },
    );
  }

  async #retire(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const { cluster } = this.#o;
    const { name } = server.metadata;
    const status = server.status ?? {};
    if (status.phase === 'Running' && pod) await this.#cleanStop(server);
    this.#mayWrite();
    if (set) {
      this.#count('delete');
      await cluster.deleteStatefulSet(name);
    }
    if (this.#caches.get('services', name)) {
      this.#count('delete');
      await cluster.deleteService(name);
    }
    const retired = status.conditions?.some((c) => c.type === 'Retired' && c.status === 'True');
    if (!retired) await this.#event(server, 'Normal', 'Retired', 'retired: its StatefulSet and Service are gone, its world volume is kept');
    await this.#sync(server, undefined, { phase: 'Stopped', ready: false, players: { online: 0, max: status.players?.max ?? DEFAULT_PLAYERS_MAX } }, { reason: 'Retired' }, [
      retiredCondition(status, this.#now()),
    ]);
  }

  /**
   * A server deleted in the cluster (`kubectl delete`): the game is stopped as a stop over the API
   * stops it (the players warned and the world saved over RCON, then the set scaled to 0), the
   * service's database lets go of it once its pod is gone, and only then is the finalizer removed,
   * so the API server deletes it (and the garbage collector its StatefulSet, Service and Secret,
   * which it owns). A step that fails comes back by the queue's back-off; the resource stays until
   * every step is done.
   */
  async #finalize(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const finalizers = server.metadata.finalizers ?? [];
    const { name, uid } = server.metadata;
    // Done already (the cache has not seen the deletion yet): not forgotten twice.
    if (!finalizers.includes(SERVER_FINALIZER) || (this.#finalized.has(name) && this.#finalized.get(name) === uid)) return;
    if (set && set.spec?.replicas !== 0) {
      if (pod && podRunning(pod)) await this.#cleanStop(server);
      await this.#applySet(server, set, 0);
      await this.#event(server, 'Normal', 'Deleting', pod ? `pod ${pod.metadata?.name} stopped cleanly: ${name} is being deleted` : `${name} is being deleted`);
    }
    // The pod's deletion (a watch event) queues the server again.
    if (pod) return this.#sync(server, pod, { phase: 'Stopping', ready: false });
    this.#mayWrite();
    await this.#o.forgetServer?.(name);
    try {
      await this.#setFinalizers(server, finalizers.filter((f) => f !== SERVER_FINALIZER));
      this.#finalized.set(name, uid);
    } catch (err) {
      // Already let go (this reconcile read the cache before the watch brought the deletion).
      if (err instanceof ClusterNotFoundError) return;
      throw err;
    }
    this.#probes.delete(name);
    this.#o.log.info({ server: name }, 'lifecycle controller: a server deleted in the cluster was stopped and forgotten');
  }

  /** The server's finalizers, written over the version read (a newer one fails the reconcile, which comes back). */
  async #setFinalizers(server: MinecraftServer, finalizers: string[]): Promise<void> {
    this.#mayWrite();
    this.#count('patch');
    const updated = await this.#o.cluster.setServerFinalizers(server.metadata.name, finalizers, server.metadata.resourceVersion ?? '');
    // The last finalizer of a deleted server gone: the API server deletes it now.
    if (updated.metadata.deletionTimestamp && !updated.metadata.finalizers?.length) this.#caches.forget('servers', updated.metadata.name);
    else this.#caches.assume('servers', updated);
    server.metadata = updated.metadata;
  }

  #hopelessPod(pod: V1Pod | undefined): string | undefined {
    for (const container of pod?.status?.containerStatuses ?? []) {
      const reason = container.state?.waiting?.reason;
      if (reason && HOPELESS_REASONS.has(reason)) return `${reason}: ${container.state?.waiting?.message ?? ''}`.trim();
    }
    return undefined;
  }

  /**
   * Writes the status when it differs by value from what the server carries: the fields `patch`
   * names, the node its pod runs on, the conditions (Ready, Progressing, Degraded) that follow from
   * them, and the generation of the spec it answers. Nothing is sent when nothing changed.
   */
  async #sync(server: MinecraftServer, pod: V1Pod | undefined, patch: StatusPatch, hint?: ReadyHint, extra: Condition[] = []): Promise<void> {
    const status = server.status ?? {};
    const merged: MinecraftServerStatus = { ...status };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key as keyof MinecraftServerStatus];
      else (merged as Record<string, unknown>)[key] = value;
    }
    merged.phase ??= 'Stopped';
    const node = pod?.spec?.nodeName;
    const generation = server.metadata.generation;
    const full: StatusPatch = {
      ...patch,
      phase: merged.phase,
      node: node ?? null,
      conditions: conditionsFor(status, merged, this.#now(), generation, hint, extra),
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    };
    const diff: StatusPatch = {};
    for (const [key, value] of Object.entries(full) as Array<[keyof MinecraftServerStatus, unknown]>) {
      const current = status[key];
      const same = key === 'conditions' ? sameConditions(current as Condition[] | undefined, value as Condition[]) : sameValue(current ?? null, value ?? null);
      if (!same) (diff as Record<string, unknown>)[key] = value;
    }
    if (Object.keys(diff).length === 0) return;
    this.#mayWrite();
    this.#count('patch');
    const updated = await this.#o.cluster.patchServerStatus(server.metadata.name, diff);
    this.#caches.assume('servers', updated);
    server.status = updated.status;
  }

  /** The server comes back to the queue at `at` (the controller's clock), for a step that falls due then. */
  #requeueAt(name: string, at: number): void {
    this.#work().addAfter(name, Math.max(0, at - this.#now().getTime()));
  }

  /** A core Event on the server for what the controller did (`kubectl describe mcs <name>`); never fails a reconcile. */
  async #event(server: MinecraftServer, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    this.#count('create');
    await this.#o.cluster.recordServerEvent(server, type, reason, message).catch((err: unknown) => {
      this.#o.log.debug({ err, server: server.metadata.name, reason }, 'lifecycle event not recorded');
    });
  }

  #count(verb: string): void {
    this.#apiRequests?.inc({ verb });
  }

  #now(): Date {
    return this.#o.clock.now();
  }
}

class NotLeadingError extends Error {
  override name = 'NotLeadingError';
}

/** The Retired condition, True from the first retiring reconcile on. */
function retiredCondition(status: MinecraftServerStatus, now: Date): Condition {
  const old = status.conditions?.find((c) => c.type === 'Retired');
  return { type: 'Retired', status: 'True', reason: 'Retired', lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : now.toISOString() };
}

/**
 * The conditions of a status, by the operator conventions: Ready (the pod Ready and RCON
 * answering), Progressing (a start or stop under way), Degraded (a start that timed out or gave
 * up, a running server not ready). Each keeps its lastTransitionTime while its status holds, and
 * its reason while its status and the phase hold (unless the step that wrote it names another).
 */
function conditionsFor(
  before: MinecraftServerStatus,
  after: MinecraftServerStatus,
  now: Date,
  generation: number | undefined,
  hint: ReadyHint | undefined,
  extra: Condition[],
): Condition[] {
  const phase = after.phase ?? 'Stopped';
  const phaseHeld = before.phase === phase;
  const ready = phase === 'Running' && after.ready === true;
  const wanted: Array<Omit<Condition, 'lastTransitionTime'>> = [
    { type: 'Ready', status: ready ? 'True' : 'False', ...(hint ?? { reason: ready ? 'RconAnswered' : phase === 'Running' ? 'NotReady' : phase }) },
    { type: 'Progressing', status: phase === 'Starting' || phase === 'Stopping' ? 'True' : 'False', reason: phase },
    phase === 'Failed'
      ? { type: 'Degraded', status: 'True', reason: 'StartGaveUp' }
      : phase === 'Starting' && (after.autoRestarts ?? 0) > 0
        ? { type: 'Degraded', status: 'True', reason: 'StartTimedOut' }
        : phase === 'Running' && !ready
          ? { type: 'Degraded', status: 'True', reason: 'NotReady' }
          : { type: 'Degraded', status: 'False', reason: 'AsExpected' },
  ];
  const types = new Set([...wanted.map((c) => c.type), ...extra.map((c) => c.type)]);
  const kept = (before.conditions ?? []).filter((c) => !types.has(c.type));
  const made = wanted.map((c): Condition => {
    const old = before.conditions?.find((o) => o.type === c.type);
    const held = old?.status === c.status;
    const reason = !hint || c.type !== 'Ready' ? (held && phaseHeld && old?.reason ? { reason: old.reason, ...(old.message ? { message: old.message } : {}) } : c) : c;
    return {
      type: c.type,
      status: c.status,
      ...(reason.reason ? { reason: reason.reason } : {}),
      ...(reason.message ? { message: reason.message } : {}),
      lastTransitionTime: held && old ? old.lastTransitionTime : now.toISOString(),
    };
  });
  return [...kept, ...made, ...extra].map((c) => (generation === undefined ? c : { ...c, observedGeneration: generation }));
}

/** Conditions equal by value: the same types with the same status, reason, message and generation. */
function sameConditions(a: Condition[] | undefined, b: Condition[]): boolean {
  const key = (cs: Condition[] | undefined) => canonical([...(cs ?? [])].sort((x, y) => x.type.localeCompare(y.type)).map(({ lastTransitionTime: _, ...c }) => c));
  return key(a) === key(b);
}

/** Equal by value, whatever the order of object keys (the API server returns its own order). */
function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => x.localeCompare(y))) : v,
  );
}

async function stopCommands(session: RconSession): Promise<void> {
  await session.command(STOP_WARNING);
  await session.command('save-all flush');
}

/** A server whose desired state is not reached yet, or that is being deleted: a new leader looks at it first. */
function pending(server: MinecraftServer): boolean {
  const phase = server.status?.phase ?? 'Stopped';
  if (server.metadata.deletionTimestamp) return true;
  return server.spec.desiredState === 'Running' ? phase !== 'Running' : phase !== 'Stopped';
}

function podRunning(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp;
}

/** The kubelet's readiness of the pod (the Service sends players only to a Ready pod). */
function podReady(pod: V1Pod): boolean {
  return podRunning(pod) && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

function playersStatus(players: PlayerCount | undefined, status: MinecraftServerStatus): MinecraftServerStatus['players'] {
  if (players) return { online: players.online, max: players.max, unknown: false };
  return { online: status.players?.online ?? 0, max: status.players?.max ?? DEFAULT_PLAYERS_MAX, unknown: true };
}

/** The Lease the replicas' controllers lead by (in the service's namespace). */
export const CONTROLLER_LEASE = 'felis-lifecycle-controller';

/**
 * The controller as the cluster's background task. On Kubernetes it leads by a
 * `coordination.k8s.io` Lease (lease.ts), not by the database's leases: the replica that leads is
 * one that reaches the API server it acts on, and one that cannot renew steps down. A wake or stop
 * from the API queues the server it concerns at once.
 */
export function lifecycleTask(cluster: KubernetesCluster, clock: Clock, deps: ClusterTaskDeps, identity = `${process.env.POD_NAME || hostname()}_${randomUUID()}`): ClusterTask {
  const log = deps.log.child({ component: 'lifecycle' });
  const lock = new LeaseLock({ kubeConfig: cluster.kubeConfig, namespace: cluster.namespace, name: CONTROLLER_LEASE, identity, log });
  const controller = new LifecycleController({
    cluster,
    lock,
    rcon: (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs }),
    clock,
    log,
    registry: deps.registry,
    leaseRetryMs: LEASE_TIMING.retryPeriodMs,
    forgetServer: deps.forgetServer,
  });
  let stopKicks: (() => void) | undefined;
  return {
    name: 'lifecycle',
    start: () => {
      controller.start();
      stopKicks = deps.onDesiredStateChange((name) => controller.kick(name));
    },
    stop: async () => {
      stopKicks?.();
      await controller.stop();
    },
  };
}
