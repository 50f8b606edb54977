import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../../lib/clock.js';
import type { Logger } from '../../../lib/logger.js';
import { RconConnection, type RconEndpoint } from '../../rcon/client.js';
import { parsePlayerList, type PlayerCount } from '../../rcon/players.js';
import type { ClusterTask, ClusterTaskDeps, LeaderLock } from '../types.js';
import type { KubernetesCluster } from './adapter.js';
import {
  DEFAULT_PLAYERS_MAX,
  DEFAULT_READINESS_TIMEOUT_SECONDS,
  DEFAULT_START_TIMEOUT_SECONDS,
  SERVER_LABEL,
  effectiveIdleStopSeconds,
  type Condition,
  type MinecraftServer,
  type MinecraftServerStatus,
} from './resource.js';
import { appliedStatefulSet, carriesCurrentTemplate, MANAGED_SELECTOR, serviceFor, specProblem } from './workloads.js';

/** An authenticated RCON connection (src/adapters/rcon's client). */
export interface RconSession {
  command(text: string): Promise<string>;
  close(): void;
}

/** Opens a connection: TCP accept, then the password accepted, within `timeoutMs`; rejects otherwise. */
export type RconOpener = (endpoint: RconEndpoint, timeoutMs: number) => Promise<RconSession>;

export interface LifecycleOptions {
  cluster: KubernetesCluster;
  lock: LeaderLock;
  rcon: RconOpener;
  clock: Clock;
  log: Logger;
  /** Time between passes. */
  intervalMs?: number;
  /** Pod recreations of one start before it gives up. */
  maxAutoRestarts?: number;
  /** The first back-off after a start time-out; each next one doubles. */
  restartBackoffMs?: number;
  /** Idle stop never happens this soon after the server was first ready. */
  idleGraceMs?: number;
  /** Where `felis_lifecycle_*` metrics go; none when unset. */
  registry?: Registry;
}

/** Pod waiting reasons that no retry can cure: the start gives up at once. */
const HOPELESS_REASONS = new Set(['InvalidImageName', 'CreateContainerConfigError', 'ErrImageNeverPull']);
const STOP_WARNING = 'say This server is stopping now. The world is being saved.';

type StatusPatch = { [K in keyof MinecraftServerStatus]?: MinecraftServerStatus[K] | null };

interface Observed {
  server: MinecraftServer;
  set: V1StatefulSet | undefined;
  pod: V1Pod | undefined;
  hasService: boolean;
}

/**
 * The lifecycle controller: makes each MinecraftServer's StatefulSet and Service, starts and stops
 * its pod as `desiredState` asks, supervises starts (time-outs, recreations, giving up), reads
 * readiness and players over RCON, stops empty servers, and retires. Level-triggered: every pass
 * looks at what is and moves each server one step, so a pass missed or cut short by a lost lock is
 * made up by the next one on whichever replica then leads.
 */
export class LifecycleController {
  readonly #o: Required<Omit<LifecycleOptions, 'registry'>>;
  readonly #leaderGauge: Gauge | undefined;
  readonly #gaveUp: Counter<'reason'> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #leading = false;
  #kicked = false;
  /** Passes that acted (tests count them to show two replicas never both act). */
  passesActed = 0;

  constructor(options: LifecycleOptions) {
    this.#o = { intervalMs: 2_000, maxAutoRestarts: 3, restartBackoffMs: 10_000, idleGraceMs: 180_000, ...options };
    const registers = options.registry ? [options.registry] : [];
    if (options.registry) {
      this.#leaderGauge = new Gauge({ name: 'felis_lifecycle_leader', help: '1 while this replica leads the lifecycle controller.', registers });
      this.#gaveUp = new Counter({ name: 'felis_lifecycle_starts_given_up_total', help: 'Server starts that gave up, by reason.', labelNames: ['reason'], registers });
    }
  }

  /**
   * Something asks for a pass now (a server was woken or stopped) rather than at the next interval.
   * Kicks while a pass runs make one more pass after it, so the change is seen.
   */
  kick(): void {
    if (!this.#timer || this.#kicked) return;
    this.#kicked = true;
    void (this.#running ?? Promise.resolve()).then(() => {
      this.#kicked = false;
      return this.#timer ? this.tick() : undefined;
    });
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.tick(), this.#o.intervalMs);
    this.#timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
    await this.#o.lock.release();
  }

  /** One pass if this replica holds (or can take) the lock; passes never overlap. */
  tick(): Promise<void> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(): Promise<void> {
    const leading = await this.#o.lock.acquire();
    this.#leaderGauge?.set(leading ? 1 : 0);
    if (leading !== this.#leading) {
      this.#leading = leading;
      this.#o.log.info({}, leading ? 'lifecycle controller: leading' : 'lifecycle controller: standing by');
    }
    if (!leading) return;
    this.passesActed += 1;
    let observed: Observed[];
    try {
      observed = await this.#observe();
    } catch (err) {
      this.#o.log.warn({ err }, 'lifecycle controller: cannot read the cluster');
      return;
    }
    for (const item of observed) {
      // A replica that lost the lock mid-pass stops before its next write.
      if (!this.#o.lock.holds()) return;
      try {
        await this.#reconcile(item);
      } catch (err) {
        this.#o.log.warn({ err, server: item.server.metadata.name }, 'lifecycle controller: reconcile failed');
      }
    }
  }

  async #observe(): Promise<Observed[]> {
    const { cluster } = this.#o;
    const [servers, sets, pods, services] = await Promise.all([
      cluster.listServerObjects(),
      cluster.listStatefulSets(MANAGED_SELECTOR),
      cluster.listPods(MANAGED_SELECTOR),
      cluster.listServices(MANAGED_SELECTOR),
    ]);
    const serviceNames = new Set(services.map((s) => s.metadata?.name));
    const setByName = new Map(sets.map((s) => [s.metadata?.name, s]));
    const podByServer = new Map(pods.map((p) => [p.metadata?.labels?.[SERVER_LABEL], p]));
    return servers.items.map((server) => ({
      server,
      set: setByName.get(server.metadata.name),
      pod: podByServer.get(server.metadata.name),
      hasService: serviceNames.has(server.metadata.name),
    }));
  }

  async #reconcile({ server, set, pod, hasService }: Observed): Promise<void> {
    const { cluster } = this.#o;
    const { name } = server.metadata;
    const status = server.status ?? {};
    if (server.spec.retired) return this.#retire(server, set, pod);
    if (!hasService) await cluster.applyService(serviceFor(server, cluster.crd));
    const problem = specProblem(server);
    if (!set && !problem) set = await this.#applySet(server, undefined, 0);
    const phase = status.phase ?? 'Stopped';

    if (server.spec.desiredState !== 'Running') {
      if (phase === 'Stopped') return;
      if (phase === 'Running' && pod) await this.#cleanStop(server);
      if (set && set.spec?.replicas !== 0) await this.#applySet(server, set, 0);
      if (pod) return phase === 'Stopping' ? undefined : this.#patch(server, { phase: 'Stopping', ready: false });
      return this.#patch(server, {
        phase: 'Stopped',
        ready: false,
        players: { online: 0, max: status.players?.max ?? DEFAULT_PLAYERS_MAX },
        autoRestarts: 0,
        startGaveUp: false,
        startedAt: null,
        firstReadyAt: null,
        emptySince: null,
        retryAt: null,
        conditions: this.#condition(status, 'Ready', 'False', 'Stopped'),
      });
    }

    if (phase === 'Failed' && status.startGaveUp) return;
    const hopeless = problem ?? this.#hopelessPod(pod);
    if (hopeless) return this.#giveUp(server, set, 'InvalidSpec', hopeless);
    if (phase === 'Starting') return this.#superviseStart(server, set, pod);
    if (phase === 'Running') return this.#superviseRunning(server, set, pod);
    // Stopped, Stopping, Unknown, or Failed with budget left: a fresh start, on the spec as it is now.
    await this.#startSet(server, set);
    await this.#event(server, 'Normal', 'Starting', `scaled ${name} to 1 to start it`);
    await this.#patch(server, {
      phase: 'Starting',
      ready: false,
      autoRestarts: 0,
      startGaveUp: false,
      startedAt: this.#now().toISOString(),
      firstReadyAt: null,
      emptySince: null,
      retryAt: null,
      conditions: this.#condition(status, 'Ready', 'False', 'Starting'),
    });
  }

  /**
   * A start: the set at one replica, with the pod template of the spec as it is now. A spec that
   * changed since the set was made (image, memory, resources) goes into the template here, before
   * the start, never under a running server. The world volume's size is in the claim template,
   * which Kubernetes does not let change.
   */
  async #startSet(server: MinecraftServer, set: V1StatefulSet | undefined): Promise<void> {
    const rolls = set !== undefined && !carriesCurrentTemplate(server, set);
    if (!rolls && set?.spec?.replicas === 1) return;
    await this.#applySet(server, set, 1, true);
    if (rolls) this.#o.log.info({ server: server.metadata.name, image: server.spec.image }, 'lifecycle controller: the spec change goes into the StatefulSet before this start');
  }

  /**
   * The controller's one write of a StatefulSet: server-side apply of the whole set it owns, with
   * `replicas`; the template is the spec's current one only on a start (`roll`) or a new set.
   */
  #applySet(server: MinecraftServer, set: V1StatefulSet | undefined, replicas: number, roll = false): Promise<V1StatefulSet> {
    return this.#o.cluster.applyStatefulSet(appliedStatefulSet(server, this.#o.cluster.crd, replicas, set, roll));
  }

  async #superviseStart(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const { cluster, maxAutoRestarts, restartBackoffMs } = this.#o;
    const { name } = server.metadata;
    const status = server.status ?? {};
    const now = this.#now();
    if (status.retryAt) {
      if (now.getTime() < Date.parse(status.retryAt)) return;
      // The back-off is over: a new pod, and the start's clock begins again.
      await cluster.deletePod(`${name}-0`);
      return this.#patch(server, { retryAt: null, startedAt: now.toISOString() });
    }
    if (set?.spec?.replicas !== 1) await this.#applySet(server, set, 1);
    if (pod && podRunning(pod)) {
      const probe = await this.#probe(server);
      if (probe.reachable) {
        await this.#event(server, 'Normal', 'Ready', 'RCON answered: the server is running');
        return this.#patch(server, {
          phase: 'Running',
          ready: true,
          firstReadyAt: status.firstReadyAt ?? now.toISOString(),
          emptySince: probe.players?.online === 0 ? now.toISOString() : null,
          players: playersStatus(probe.players, status),
          endpoint: { mode: 'service', address: `${name}.${cluster.namespace}.svc:25565` },
          conditions: this.#condition(status, 'Ready', 'True', 'RconAnswered'),
        });
      }
    }
    const startedAt = status.startedAt ? Date.parse(status.startedAt) : now.getTime();
    const timeoutMs = (server.spec.startTimeoutSeconds ?? DEFAULT_START_TIMEOUT_SECONDS) * 1000;
    if (now.getTime() - startedAt < timeoutMs) {
      if (!status.startedAt) await this.#patch(server, { startedAt: now.toISOString() });
      return;
    }
    const restarts = status.autoRestarts ?? 0;
    if (restarts >= maxAutoRestarts) return this.#giveUp(server, set, 'StartTimedOut', `not ready after ${restarts + 1} attempts`);
    this.#o.log.info({ server: name, attempt: restarts + 1 }, 'start timed out; the pod is recreated after a back-off');
    await this.#event(server, 'Warning', 'StartTimedOut', `not ready in time (attempt ${restarts + 1}); the pod is recreated after a back-off`);
    await this.#patch(server, {
      autoRestarts: restarts + 1,
      retryAt: new Date(now.getTime() + restartBackoffMs * 2 ** restarts).toISOString(),
      conditions: this.#condition(status, 'Ready', 'False', 'StartTimedOut'),
    });
  }

  async #superviseRunning(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const status = server.status ?? {};
    const now = this.#now();
    if (!pod || !podRunning(pod)) {
      // The pod went away under a running server: supervise its return as a start.
      return this.#patch(server, { phase: 'Starting', ready: false, startedAt: now.toISOString(), retryAt: null });
    }
    const probe = await this.#probe(server, async (players, session) => {
      if (!this.#idleDue(server, players)) return false;
      this.#o.log.info({ server: server.metadata.name }, 'idle stop: empty for its idle period');
      await stopCommands(session);
      return true;
    });
    if (probe.stopped) {
      await this.#o.cluster.patchServerSpec(server.metadata.name, { desiredState: 'Stopped' });
      if (set) await this.#applySet(server, set, 0);
      await this.#event(server, 'Normal', 'IdleStopped', 'empty for its idle period: stopped');
      return this.#patch(server, { phase: 'Stopping', ready: false, conditions: this.#condition(status, 'Ready', 'False', 'IdleStopped') });
    }
    const players = playersStatus(probe.players, status);
    const empty = probe.players?.online === 0;
    const patch: StatusPatch = {
      ready: probe.reachable,
      players,
      emptySince: empty ? (status.emptySince ?? now.toISOString()) : probe.players ? null : (status.emptySince ?? null),
      conditions: this.#condition(status, 'Ready', probe.reachable ? 'True' : 'False', probe.reachable ? 'RconAnswered' : 'RconUnreachable'),
    };
    if (changed(status, patch)) await this.#patch(server, patch);
  }

  #idleDue(server: MinecraftServer, players: PlayerCount | undefined): boolean {
    const status = server.status ?? {};
    const idleSeconds = effectiveIdleStopSeconds(server);
    // An unreadable count pauses idle stop: an empty server is never assumed.
    if (idleSeconds <= 0 || players?.online !== 0 || !status.emptySince || !status.firstReadyAt) return false;
    const now = this.#now().getTime();
    if (now - Date.parse(status.firstReadyAt) < this.#o.idleGraceMs) return false;
    return now - Date.parse(status.emptySince) >= idleSeconds * 1000;
  }

  /**
   * TCP accept plus an accepted password; then `list`. `then` may use the session before it
   * closes (the idle stop's commands).
   */
  async #probe(
    server: MinecraftServer,
    then?: (players: PlayerCount | undefined, session: RconSession) => Promise<boolean>,
  ): Promise<{ reachable: boolean; players?: PlayerCount; stopped?: boolean }> {
    let session: RconSession;
    try {
      session = await this.#open(server);
    } catch {
      return { reachable: false };
    }
    try {
      let players: PlayerCount | undefined;
      try {
        players = parsePlayerList(await session.command('list'));
      } catch {
        players = undefined;
      }
      const stopped = then ? await then(players, session) : false;
      return players ? { reachable: true, players, stopped } : { reachable: true, stopped };
    } finally {
      session.close();
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

  async #giveUp(server: MinecraftServer, set: V1StatefulSet | undefined, reason: string, message: string): Promise<void> {
    const status = server.status ?? {};
    if (set && set.spec?.replicas !== 0) await this.#applySet(server, set, 0);
    this.#o.log.warn({ server: server.metadata.name, reason, message }, 'start gave up');
    this.#gaveUp?.inc({ reason });
    await this.#event(server, 'Warning', 'StartGaveUp', `${reason}: ${message}`);
    await this.#patch(server, {
      phase: 'Failed',
      ready: false,
      startGaveUp: true,
      autoRestarts: status.autoRestarts ?? 0,
      retryAt: null,
      conditions: this.#condition(status, 'Ready', 'False', reason, message),
    });
  }

  async #retire(server: MinecraftServer, set: V1StatefulSet | undefined, pod: V1Pod | undefined): Promise<void> {
    const { cluster } = this.#o;
    const { name } = server.metadata;
    const status = server.status ?? {};
    if (status.phase === 'Running' && pod) await this.#cleanStop(server);
    if (set) await cluster.deleteStatefulSet(name);
    await cluster.deleteService(name);
    if (status.conditions?.some((c) => c.type === 'Retired' && c.status === 'True') && status.phase === 'Stopped') return;
    await this.#event(server, 'Normal', 'Retired', 'retired: its StatefulSet and Service are gone, its world volume is kept');
    await this.#patch(server, {
      phase: 'Stopped',
      ready: false,
      players: { online: 0, max: status.players?.max ?? DEFAULT_PLAYERS_MAX },
      conditions: this.#condition({ conditions: this.#condition(status, 'Ready', 'False', 'Retired') }, 'Retired', 'True', 'Retired'),
    });
  }

  #hopelessPod(pod: V1Pod | undefined): string | undefined {
    for (const container of pod?.status?.containerStatuses ?? []) {
      const reason = container.state?.waiting?.reason;
      if (reason && HOPELESS_REASONS.has(reason)) return `${reason}: ${container.state?.waiting?.message ?? ''}`.trim();
    }
    return undefined;
  }

  #condition(status: MinecraftServerStatus, type: string, value: Condition['status'], reason: string, message?: string): Condition[] {
    const others = (status.conditions ?? []).filter((c) => c.type !== type);
    const old = status.conditions?.find((c) => c.type === type);
    const lastTransitionTime = old && old.status === value ? old.lastTransitionTime : this.#now().toISOString();
    return [...others, { type, status: value, reason, ...(message ? { message } : {}), lastTransitionTime }];
  }

  /** Writes the status, saying which generation of the spec it answers (and each condition with it). */
  async #patch(server: MinecraftServer, patch: StatusPatch): Promise<void> {
    const generation = server.metadata.generation;
    const stamped: StatusPatch =
      generation === undefined
        ? patch
        : { ...patch, observedGeneration: generation, ...(patch.conditions ? { conditions: patch.conditions.map((c) => ({ ...c, observedGeneration: generation })) } : {}) };
    const updated = await this.#o.cluster.patchServerStatus(server.metadata.name, stamped);
    server.status = updated.status;
  }

  /** A core Event on the server for what the controller did (`kubectl describe mcs <name>`); never fails a pass. */
  async #event(server: MinecraftServer, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    await this.#o.cluster.recordServerEvent(server, type, reason, message).catch((err: unknown) => {
      this.#o.log.debug({ err, server: server.metadata.name, reason }, 'lifecycle event not recorded');
    });
  }

  #now(): Date {
    return this.#o.clock.now();
  }
}

async function stopCommands(session: RconSession): Promise<void> {
  await session.command(STOP_WARNING);
  await session.command('save-all flush');
}

function podRunning(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp;
}

function playersStatus(players: PlayerCount | undefined, status: MinecraftServerStatus): MinecraftServerStatus['players'] {
  if (players) return { online: players.online, max: players.max, unknown: false };
  return { online: status.players?.online ?? 0, max: status.players?.max ?? DEFAULT_PLAYERS_MAX, unknown: true };
}

function changed(status: MinecraftServerStatus, patch: StatusPatch): boolean {
  for (const [key, value] of Object.entries(patch)) {
    const current = status[key as keyof MinecraftServerStatus];
    if (key === 'conditions') {
      const strip = (cs: unknown) => JSON.stringify((cs as Condition[] | undefined)?.map(({ lastTransitionTime: _, ...c }) => c) ?? null);
      if (strip(current) !== strip(value)) return true;
    } else if (JSON.stringify(current ?? null) !== JSON.stringify(value ?? null)) return true;
  }
  return false;
}

/**
 * The controller as the cluster's background task: a pass every interval while this replica leads,
 * and one at once when a server's desired state changes (a wake or a stop), not at the next pass.
 */
export function lifecycleTask(cluster: KubernetesCluster, clock: Clock, deps: ClusterTaskDeps): ClusterTask {
  const controller = new LifecycleController({
    cluster,
    lock: deps.leadership,
    rcon: (endpoint, timeoutMs) => RconConnection.open(endpoint, { connectTimeoutMs: timeoutMs, commandTimeoutMs: timeoutMs }),
    clock,
    log: deps.log.child({ component: 'lifecycle' }),
    registry: deps.registry,
  });
  let stopKicks: (() => void) | undefined;
  return {
    name: 'lifecycle',
    start: () => {
      controller.start();
      stopKicks = deps.onDesiredStateChange(() => controller.kick());
    },
    stop: async () => {
      stopKicks?.();
      await controller.stop();
    },
  };
}
