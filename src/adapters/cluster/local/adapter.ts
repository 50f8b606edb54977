import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { systemClock, type Clock } from '../../../lib/clock.js';
import type { Logger } from '../../../lib/logger.js';
import { RconConnection, type RconEndpoint } from '../../rcon/client.js';
import { parsePlayerList, type PlayerCount } from '../../rcon/players.js';
import { javaMemoryFor } from '../quantity.js';
import { readSpecs, writeSpecs } from '../spec-file.js';
import {
  ClusterConflictError,
  ClusterNoPodError,
  ClusterNotFoundError,
  DEFAULT_SERVER_RESOURCES,
  SYSTEM_LABEL,
  type ClusterAdapter,
  type ClusterCapacity,
  type ClusterTask,
  type DesiredState,
  type Phase,
  type PodLogLine,
  type PodLogOptions,
  type ServerList,
  type ServerResource,
  type ServerSpec,
  type ServerSpecPatch,
  type ServerStatus,
  type ServerWatch,
  type ServerWatchEvent,
} from '../types.js';
import { ConsoleLog } from '../console-log.js';
import { endLeftoverGames, gameEnvironment, GameProcess } from './process.js';
import { PortRange } from './ports.js';
import { writeEula, writeServerProperties } from './properties.js';

export interface LocalClusterOptions {
  /** Where the servers' folders are (`DATA_DIR/worlds`: the worlds feature's folders, so backups see the game's files). */
  worldsRoot: string;
  /** Where the specs and the pid files are kept (`DATA_DIR/local`). */
  stateDir: string;
  /** Run through `sh -c` in the server's folder (LOCAL_SERVER_COMMAND). */
  command: string;
  /** The jar the default command runs (SERVER_JAR in its environment). */
  jar: string;
  /** LOCAL_EULA=true: the operator accepted the game's EULA. */
  eula: boolean;
  ports: { first: number; last: number };
  onlineMode: boolean;
  log: Logger;
  clock?: Clock;
  /** After `stop` over RCON (or a TERM), how long before the next step. */
  stopGraceMs?: number;
  /** A start whose RCON does not answer within this is a failed start. */
  startTimeoutMs?: number;
  maxAutoRestarts?: number;
  /** The first retry's back-off; each next one doubles. */
  restartBackoffMs?: number;
  /** How often the supervisor looks at each game (RCON while starting, the player count while running). */
  probeIntervalMs?: number;
  defaultIdleStopSeconds?: number;
  /** A server is never idle-stopped this soon after it first came up. */
  idleGraceMs?: number;
  defaultPlayersMax?: number;
}

interface LocalServer {
  spec: ServerSpec;
  status: ServerStatus;
  resourceVersion: string;
  game?: GameProcess;
  /** The console of the current (or last failed) start; a start that never ran a process has one line. */
  console?: ConsoleLog;
  rcon?: RconEndpoint;
  ports: number[];
  /** When this attempt began (clock ms). */
  attemptSince: number;
  retryAt?: number;
  firstReadyAt?: number;
  emptySince?: number;
  /** The process ends because we end it: its exit is a stop, not a crash. */
  stopping?: Promise<void>;
  /** A start in progress (writing the folder, spawning). */
  starting?: Promise<void>;
  probing: boolean;
}

/**
 * The lines after which a game's RCON may answer (vanilla, Paper, Fabric write them; any case):
 * one is a cue to ask at once rather than at the next round.
 */
const READY_HINT = /rcon running on|done \([\d.,]+s\)!/i;
const STOP_WARNING = 'say This server is stopping now. The world is being saved.';
const clone = <T>(value: T): T => structuredClone(value);
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * Game servers as child processes on this machine (CLUSTER=local), behind the cluster interface
 * the simulated and Kubernetes clusters implement: each server runs LOCAL_SERVER_COMMAND in its
 * own folder, listens on 127.0.0.1 on ports of LOCAL_PORT_RANGE, is Running once its RCON answers,
 * and a crash is a failed start with the Kubernetes controller's restart budget. Specs are kept in
 * a file; a service that stops stops its games cleanly and the next one starts those whose desired
 * state is Running again (a game outliving the service would be a process nobody supervises).
 */
export class LocalCluster implements ClusterAdapter {
  readonly kind = 'local' as const;
  readonly clock: Clock;
  readonly #o: Required<Omit<LocalClusterOptions, 'clock'>>;
  readonly #stateFile: string;
  readonly #pidDir: string;
  readonly #ports: PortRange;
  #version = 0;
  #servers = new Map<string, LocalServer>();
  #watchers = new Set<(event: ServerWatchEvent) => void>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(options: LocalClusterOptions) {
    this.clock = options.clock ?? systemClock;
    this.#o = {
      stopGraceMs: 30_000,
      startTimeoutMs: 300_000,
      maxAutoRestarts: 3,
      restartBackoffMs: 10_000,
      probeIntervalMs: 2_000,
      defaultIdleStopSeconds: 900,
      idleGraceMs: 180_000,
      defaultPlayersMax: 20,
      ...options,
      worldsRoot: resolve(options.worldsRoot),
      jar: resolve(options.jar),
    };
    this.#stateFile = join(options.stateDir, 'servers.json');
    this.#pidDir = join(options.stateDir, 'pids');
    this.#ports = new PortRange(options.ports.first, options.ports.last);
  }

  /**
   * Ends what a previous life left running, loads the kept specs and starts the servers whose
   * desired state is Running; then supervises them until `close`.
   */
  static async open(options: LocalClusterOptions): Promise<LocalCluster> {
    const cluster = new LocalCluster(options);
    await endLeftoverGames(cluster.#pidDir, cluster.#o.stopGraceMs, options.log);
    for (const spec of readSpecs(cluster.#stateFile)) cluster.addServer(spec, false);
    cluster.#timer = setInterval(() => cluster.#supervise(), cluster.#o.probeIntervalMs);
    cluster.#timer.unref();
    return cluster;
  }

  async ping(): Promise<void> {
    if (this.#closed) throw new Error('the local cluster is closed');
  }

  /** Stops every game cleanly (RCON `stop`, then a signal, then a kill), in parallel. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#watchers.clear();
    await Promise.all(
      [...this.#servers.values()].map(async (server) => {
        await server.starting?.catch(() => undefined);
        if (server.game?.running) await this.#stopGame(server, true);
      }),
    );
  }

  async listServers(): Promise<ServerList> {
    return { servers: [...this.#servers.values()].map((s) => this.#resource(s)), resourceVersion: String(this.#version) };
  }

  watchServers(_resourceVersion: string, onEvent: (event: ServerWatchEvent) => void): ServerWatch {
    // Changes are delivered synchronously, as on the simulated cluster: nothing falls between a list and a watch.
    this.#watchers.add(onEvent);
    return { stop: () => this.#watchers.delete(onEvent) };
  }

  async createServer(spec: ServerSpec): Promise<ServerResource> {
    return this.addServer(spec);
  }

  /** Synchronous create (the kept specs at open, the system servers). */
  addServer(spec: ServerSpec, save = true): ServerResource {
    if (!NAME.test(spec.name)) throw new Error(`not a server name: ${JSON.stringify(spec.name)}`);
    if (this.#servers.has(spec.name)) throw new ClusterConflictError(`server ${spec.name} exists`);
    const system = spec.labels[SYSTEM_LABEL] === 'true';
    const server: LocalServer = {
      spec: clone({ ...spec, desiredState: spec.desiredState ?? 'Stopped' }),
      status: {
        phase: 'Stopped',
        ready: false,
        playersOnline: 0,
        playersMax: this.#o.defaultPlayersMax,
        playerCountUnknown: false,
        autoRestarts: 0,
        startGaveUp: false,
        idleStopSeconds: system ? 0 : (spec.idleStopSeconds ?? this.#o.defaultIdleStopSeconds),
      },
      resourceVersion: '',
      ports: [],
      attemptSince: this.#now(),
      probing: false,
    };
    this.#servers.set(spec.name, server);
    if (save) this.#save();
    const resource = this.#emit('ADDED', server);
    if (server.spec.desiredState === 'Running') this.#start(server);
    return resource;
  }

  async setDesiredState(name: string, state: DesiredState): Promise<ServerResource> {
    const server = this.#get(name);
    server.spec.desiredState = state;
    this.#save();
    const { phase } = server.status;
    if (state === 'Running' && (phase === 'Stopped' || phase === 'Stopping' || (phase === 'Failed' && server.status.startGaveUp))) {
      server.status.autoRestarts = 0;
      server.status.startGaveUp = false;
      this.#start(server);
    } else if (state === 'Stopped' && phase !== 'Stopped' && phase !== 'Stopping') {
      delete server.retryAt;
      if (server.game?.running) void this.#stopGame(server, true);
      else this.#enter(server, 'Stopped');
    }
    return this.#emit('MODIFIED', server);
  }

  async updateServer(name: string, patch: ServerSpecPatch): Promise<ServerResource> {
    const server = this.#get(name);
    server.spec = { ...server.spec, ...clone(patch) };
    this.#save();
    if (patch.idleStopSeconds !== undefined && server.spec.labels[SYSTEM_LABEL] !== 'true') server.status.idleStopSeconds = patch.idleStopSeconds;
    return this.#emit('MODIFIED', server);
  }

  async removeServer(name: string): Promise<void> {
    const server = this.#get(name);
    this.#servers.delete(name);
    this.#save();
    delete server.retryAt;
    if (server.game?.running) await this.#stopGame(server, false);
    const resourceVersion = String(++this.#version);
    for (const watcher of this.#watchers) watcher({ type: 'DELETED', name, resourceVersion });
  }

  async emergencyStop(name: string): Promise<ServerResource> {
    const server = this.#get(name);
    server.spec.desiredState = 'Stopped';
    this.#save();
    delete server.retryAt;
    if (server.game?.running) await this.#stopGame(server, false);
    else if (server.status.phase !== 'Stopped') this.#enter(server, 'Stopped');
    server.status.autoRestarts = 0;
    server.status.startGaveUp = false;
    return this.#emit('MODIFIED', server);
  }

  async recreatePod(name: string): Promise<ServerResource> {
    const server = this.#get(name);
    delete server.retryAt;
    if (server.game?.running) await this.#stopGame(server, false);
    server.status.autoRestarts = 0;
    server.status.startGaveUp = false;
    if (server.spec.desiredState === 'Running') this.#start(server);
    else this.#enter(server, 'Stopped');
    return this.#emit('MODIFIED', server);
  }

  async reportReady(name: string): Promise<void> {
    const server = this.#get(name);
    if (server.status.phase === 'Running' && !server.status.ready) {
      server.status.ready = true;
      this.#emit('MODIFIED', server);
    }
  }

  async capacity(): Promise<ClusterCapacity> {
    let running = 0;
    for (const s of this.#servers.values()) {
      if (s.spec.labels[SYSTEM_LABEL] === 'true') continue;
      if (s.spec.desiredState === 'Running' || s.status.phase !== 'Stopped') running += 1;
    }
    // One machine: one node.
    return { running, nodes: 1 };
  }

  podLogs(name: string, options: PodLogOptions): AsyncIterable<PodLogLine> {
    const server = this.#get(name);
    const log = server.console;
    if (!log || (server.status.phase === 'Stopped' && !server.game?.running)) {
      return (async function* () {
        throw new ClusterNoPodError(`${name} runs no game process`);
      })();
    }
    return log.read(options);
  }

  async rconEndpoint(name: string): Promise<RconEndpoint> {
    const server = this.#get(name);
    if (!server.rcon || !server.game?.running || server.status.phase !== 'Running') {
      throw new ClusterNoPodError(`${name} runs no game to reach over RCON`);
    }
    return server.rcon;
  }

  /** None: the supervisor runs in this process, which is the only one that can reach the games. */
  tasks(): ClusterTask[] {
    return [];
  }

  /** The current resource, or undefined. */
  server(name: string): ServerResource | undefined {
    const server = this.#servers.get(name);
    return server && this.#resource(server);
  }

  /** The pid of a server's game process, while it runs (tests look for orphans by it). */
  pidOf(name: string): number | undefined {
    const game = this.#servers.get(name)?.game;
    return game?.running ? game.pid : undefined;
  }

  /** Begins a start attempt: the folder, the properties, the process. Failures land in the phase. */
  #start(server: LocalServer): void {
    delete server.retryAt;
    this.#enter(server, 'Starting');
    const attempt = (async () => {
      // A previous process of this server (a start replacing a stop) ends first.
      await server.stopping;
      if (this.#closed || server.spec.desiredState !== 'Running' || !this.#servers.has(server.spec.name)) return;
      const log = new ConsoleLog(() => this.clock.now());
      server.console = log;
      if (!this.#o.eula) {
        const message =
          'cannot start: the Minecraft EULA (https://aka.ms/MinecraftEULA) is not accepted on this machine; read it, then set LOCAL_EULA=true and start the server again';
        log.write(`[felis] ${message}`);
        log.end();
        this.#o.log.warn({ server: server.spec.name }, message);
        return this.#giveUp(server);
      }
      const [gamePort, rconPort] = (server.ports = await this.#ports.take(2)) as [number, number];
      const password = randomBytes(18).toString('base64url');
      const folder = join(this.#o.worldsRoot, server.spec.name);
      await mkdir(folder, { recursive: true });
      await writeServerProperties(folder, {
        'server-ip': '127.0.0.1',
        'server-port': String(gamePort),
        'enable-rcon': 'true',
        'rcon.port': String(rconPort),
        'rcon.password': password,
        'broadcast-rcon-to-ops': 'false',
        motd: server.spec.displayName ?? server.spec.name,
        'online-mode': String(this.#o.onlineMode),
        'max-players': String(server.status.playersMax),
      });
      await writeEula(folder);
      const javaMemory = javaMemoryFor(server.spec.memory ?? DEFAULT_SERVER_RESOURCES.memory) ?? '1G';
      const game = await GameProcess.start({
        name: server.spec.name,
        folder,
        command: this.#o.command,
        env: gameEnvironment(folder, { JAVA_MEMORY: javaMemory, SERVER_JAR: this.#o.jar }),
        pidDir: this.#pidDir,
        now: () => this.clock.now(),
        onLine: (line) => {
          if (READY_HINT.test(line) && server.status.phase === 'Starting') this.#probeSoon(server);
        },
      });
      server.console = game.log;
      server.game = game;
      server.rcon = { host: '127.0.0.1', port: rconPort, password };
      server.status.endpointMode = 'local';
      server.status.endpointAddress = `127.0.0.1:${gamePort}`;
      this.#o.log.info({ server: server.spec.name, pid: game.pid, port: gamePort }, 'game process started');
      void game.exited.then((exit) => this.#exited(server, game, exit));
      this.#emit('MODIFIED', server);
    })();
    server.starting = attempt
      .catch((err: unknown) => {
        this.#o.log.error({ err, server: server.spec.name }, 'a local game could not be started');
        server.console?.write(`[felis] the start failed: ${(err as Error).message}`);
        this.#attemptFailed(server);
      })
      .finally(() => {
        server.starting = undefined;
      });
  }

  /** The process ended. By our stop: Stopped. Otherwise a crash: a failed start, against the budget. */
  #exited(server: LocalServer, game: GameProcess, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    this.#ports.give(server.ports);
    server.ports = [];
    if (server.game !== game) return;
    server.game = undefined;
    server.rcon = undefined;
    if (server.stopping || this.#closed) return;
    this.#o.log.warn({ server: server.spec.name, code: exit.code, signal: exit.signal }, 'a local game ended by itself: a failed start');
    this.#attemptFailed(server);
  }

  /** A failed attempt: retried after a doubling back-off while the budget lasts, then Failed for good. */
  #attemptFailed(server: LocalServer): void {
    if (!this.#servers.has(server.spec.name)) return;
    const restarts = server.status.autoRestarts;
    if (server.spec.desiredState !== 'Running') {
      this.#enter(server, 'Stopped');
    } else if (restarts >= this.#o.maxAutoRestarts) {
      return this.#giveUp(server);
    } else {
      server.status.autoRestarts = restarts + 1;
      server.retryAt = this.#now() + this.#o.restartBackoffMs * 2 ** restarts;
      this.#enter(server, 'Failed');
    }
    this.#emit('MODIFIED', server);
  }

  #giveUp(server: LocalServer): void {
    server.status.startGaveUp = true;
    this.#enter(server, 'Failed');
    this.#emit('MODIFIED', server);
  }

  /**
   * Ends the game: with `clean`, a warning, `save-all flush` and `stop` over RCON and the grace;
   * then (or at once without `clean`, or when RCON does not answer) a TERM to its group, the grace
   * again, and a KILL. Resolves once the process is gone.
   */
  #stopGame(server: LocalServer, clean: boolean): Promise<void> {
    const game = server.game;
    if (!game) return Promise.resolve();
    server.stopping ??= (async () => {
      this.#enter(server, 'Stopping');
      this.#emit('MODIFIED', server);
      let asked = false;
      if (clean && server.rcon) {
        try {
          const session = await RconConnection.open(server.rcon, { connectTimeoutMs: 3_000, commandTimeoutMs: 10_000 });
          try {
            await session.command(STOP_WARNING);
            await session.command('save-all flush');
            await session.command('stop').catch(() => undefined); // the game may close before it answers
            asked = true;
          } finally {
            session.close();
          }
        } catch {
          // Still starting, or hung: the signal does it.
        }
      }
      if (clean && asked && (await game.waitExit(this.#o.stopGraceMs))) return;
      game.signal(clean ? 'SIGTERM' : 'SIGKILL');
      if (await game.waitExit(clean ? this.#o.stopGraceMs : 5_000)) return;
      game.signal('SIGKILL');
      await game.exited;
    })().finally(() => {
      server.stopping = undefined;
      if (server.game === game) {
        server.game = undefined;
        server.rcon = undefined;
      }
      if (this.#servers.has(server.spec.name) && !this.#closed && server.status.phase === 'Stopping') {
        this.#enter(server, 'Stopped');
        server.status.autoRestarts = 0;
        server.status.startGaveUp = false;
        this.#emit('MODIFIED', server);
        // Asked to run again while it stopped.
        if (server.spec.desiredState === 'Running') this.#start(server);
      }
    });
    return server.stopping;
  }

  /** One round of supervision: RCON for starting games, the player count and idle stop for running ones, due retries. */
  #supervise(): void {
    const now = this.#now();
    for (const server of this.#servers.values()) {
      const { phase } = server.status;
      if (phase === 'Failed' && server.retryAt !== undefined && now >= server.retryAt && server.spec.desiredState === 'Running') {
        this.#start(server);
        this.#emit('MODIFIED', server);
      } else if (phase === 'Starting' && !server.game && !server.starting && now - server.attemptSince >= this.#o.startTimeoutMs) {
        this.#attemptFailed(server);
      } else if (phase === 'Starting' || phase === 'Running') {
        this.#probeSoon(server);
      }
    }
  }

  #probeSoon(server: LocalServer): void {
    if (!server.game?.running || server.stopping || server.probing) return;
    server.probing = true;
    void this.#probe(server).finally(() => {
      server.probing = false;
    });
  }

  /** Asks the game over RCON: reachable means Running; `list` gives the players. */
  async #probe(server: LocalServer): Promise<void> {
    const game = server.game;
    const endpoint = server.rcon;
    if (!game || !endpoint) return;
    let players: PlayerCount | undefined;
    let reachable = false;
    let session: RconConnection | undefined;
    try {
      session = await RconConnection.open(endpoint, { connectTimeoutMs: 2_000, commandTimeoutMs: 5_000 });
      reachable = true;
      players = parsePlayerList(await session.command('list'));
    } catch {
      // Not up yet, or hung.
    }
    if (server.game !== game || server.stopping) {
      session?.close();
      return;
    }
    const now = this.#now();
    const { status } = server;
    if (status.phase === 'Starting') {
      if (reachable) {
        this.#enter(server, 'Running');
        status.ready = true;
        server.firstReadyAt = now;
        this.#o.log.info({ server: server.spec.name }, 'RCON answered: the game is running');
      } else if (now - server.attemptSince >= this.#o.startTimeoutMs) {
        session?.close();
        this.#o.log.warn({ server: server.spec.name }, 'a local game did not answer RCON in time: a failed start');
        // Ended as a crash would end: its exit counts the attempt.
        game.signal('SIGKILL');
        return;
      } else {
        session?.close();
        return;
      }
    }
    if (status.phase !== 'Running') {
      session?.close();
      return;
    }
    status.ready = reachable;
    status.playerCountUnknown = players === undefined;
    if (players) {
      status.playersOnline = players.online;
      status.playersMax = players.max;
      server.emptySince = players.online === 0 ? (server.emptySince ?? now) : undefined;
    }
    if (session && players && this.#idleDue(server, players, now)) {
      session.close();
      this.#o.log.info({ server: server.spec.name }, 'idle stop: empty for its idle period');
      server.spec.desiredState = 'Stopped';
      this.#save();
      void this.#stopGame(server, true);
      return;
    }
    session?.close();
    this.#emit('MODIFIED', server);
  }

  #idleDue(server: LocalServer, players: PlayerCount, now: number): boolean {
    const idleSeconds = server.status.idleStopSeconds;
    if (idleSeconds <= 0 || players.online !== 0 || server.emptySince === undefined || server.firstReadyAt === undefined) return false;
    if (now - server.firstReadyAt < this.#o.idleGraceMs) return false;
    return now - server.emptySince >= idleSeconds * 1000;
  }

  #enter(server: LocalServer, phase: Phase): void {
    server.status.phase = phase;
    if (phase === 'Starting') server.attemptSince = this.#now();
    if (phase !== 'Running') {
      server.status.ready = false;
      server.status.playersOnline = 0;
      delete server.emptySince;
    }
    if (phase === 'Stopped' || phase === 'Failed') {
      delete server.status.endpointMode;
      delete server.status.endpointAddress;
      delete server.firstReadyAt;
    }
  }

  #emit(type: 'ADDED' | 'MODIFIED', server: LocalServer): ServerResource {
    server.resourceVersion = String(++this.#version);
    const resource = this.#resource(server);
    for (const watcher of this.#watchers) watcher({ type, server: this.#resource(server) });
    return resource;
  }

  #resource(server: LocalServer): ServerResource {
    return { spec: clone(server.spec), status: { ...server.status }, resourceVersion: server.resourceVersion };
  }

  #get(name: string): LocalServer {
    const server = this.#servers.get(name);
    if (!server) throw new ClusterNotFoundError(`server ${name} not found`);
    return server;
  }

  #save(): void {
    writeSpecs(this.#stateFile, [...this.#servers.values()].map((s) => s.spec));
  }

  #now(): number {
    return this.clock.now().getTime();
  }
}
