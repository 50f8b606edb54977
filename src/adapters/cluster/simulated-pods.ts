import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { RconEndpoint } from '../rcon/client.js';
import { PaperGame } from './simulated-paper.js';
import { SimulatedRconListener } from './simulated-rcon.js';
import { ClusterNoPodError, type Phase, type PodLogLine, type PodLogOptions } from './types.js';

/** Lines a pod keeps (the oldest go first), like a container runtime's rotated log. */
const MAX_LINES = 20_000;

interface Pod {
  lines: PodLogLine[];
  /** Sequence number of lines[0]: lines dropped from the front so far. */
  dropped: number;
  ended: boolean;
  wake: Set<() => void>;
  game: PaperGame;
  password: string;
  rcon?: Promise<SimulatedRconListener>;
}

const hhmmss = (time: Date) => time.toISOString().slice(11, 19);

/**
 * The pods of the simulated cluster: a pod exists from Starting to Stopping, writes the log lines
 * a Paper server writes (boot, RCON, commands, shutdown) on the injected clock, and answers RCON
 * like Paper with LuckPerms over a real TCP listener that opens on first use.
 */
export class SimulatedPods {
  readonly #pods = new Map<string, Pod>();

  constructor(private readonly clock: Clock) {}

  /** Follows a server's phase: a start makes a new pod, Stopped or Failed ends it. */
  phaseChanged(name: string, phase: Phase, playersMax: number): void {
    let pod = this.#pods.get(name);
    if (phase === 'Starting') {
      if (pod) this.#end(name, pod);
      pod = this.#create(name, playersMax);
      this.write(name, `Starting minecraft server version 1.21.4`);
      this.write(name, `Loading properties`);
      this.write(name, `Default game type: SURVIVAL`);
      this.write(name, `Preparing level "world"`);
    } else if (phase === 'Running' && pod) {
      this.write(name, `[LuckPerms] Enabling LuckPerms v5.4.145`);
      this.write(name, `Starting remote control listener`);
      this.write(name, `Thread RCON Listener started`);
      this.write(name, `RCON running on 0.0.0.0:25575`);
      this.write(name, `Done (5.012s)! For help, type "help"`);
    } else if (phase === 'Stopping' && pod) {
      this.write(name, `Stopping the server`);
      this.write(name, `Saving players`);
      this.write(name, `Saving worlds`);
    } else if ((phase === 'Stopped' || phase === 'Failed' || phase === 'Unknown') && pod) {
      this.#end(name, pod);
    }
  }

  /** Appends a line to the running pod's log, as Paper formats it. */
  write(name: string, message: string, level: 'INFO' | 'WARN' = 'INFO'): void {
    const pod = this.#pods.get(name);
    if (!pod) return;
    const time = this.clock.now();
    pod.lines.push({ time, line: `[${hhmmss(time)} ${level}]: ${message}` });
    if (pod.lines.length > MAX_LINES) {
      const cut = pod.lines.length - MAX_LINES;
      pod.lines.splice(0, cut);
      pod.dropped += cut;
    }
    for (const wake of pod.wake) wake();
  }

  /** The running pod's game (players, whitelist, bans, permissions); undefined without a pod. */
  game(name: string): PaperGame | undefined {
    return this.#pods.get(name)?.game;
  }

  async *logs(name: string, options: PodLogOptions): AsyncGenerator<PodLogLine> {
    const pod = this.#pods.get(name);
    if (!pod) throw new ClusterNoPodError(`${name} runs no pod`);
    let next = pod.dropped + this.#firstIndex(pod, options);
    const { signal } = options;
    while (!signal.aborted) {
      if (next < pod.dropped) next = pod.dropped;
      while (next - pod.dropped < pod.lines.length) {
        const line = pod.lines[next - pod.dropped]!;
        next += 1;
        yield line;
        if (signal.aborted) return;
      }
      if (!options.follow || pod.ended) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          pod.wake.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        pod.wake.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  async rconEndpoint(name: string, running: boolean): Promise<RconEndpoint> {
    const pod = this.#pods.get(name);
    if (!pod || !running) throw new ClusterNoPodError(`${name} runs no server to reach over RCON`);
    pod.rcon ??= SimulatedRconListener.listen(
      pod.password,
      (command) => pod.game.execute(command),
      (address) => this.write(name, `Thread RCON Client /${address} started`),
    );
    const listener = await pod.rcon;
    return { host: '127.0.0.1', port: listener.port, password: pod.password };
  }

  close(): void {
    for (const [name, pod] of this.#pods) this.#end(name, pod);
  }

  #firstIndex(pod: Pod, options: PodLogOptions): number {
    if (options.sinceTime) {
      // Kubernetes compares whole seconds.
      const since = Math.floor(options.sinceTime.getTime() / 1000) * 1000;
      const at = pod.lines.findIndex((l) => l.time.getTime() >= since);
      return at < 0 ? pod.lines.length : at;
    }
    if (options.tailLines !== undefined) return Math.max(0, pod.lines.length - options.tailLines);
    return 0;
  }

  #create(name: string, playersMax: number): Pod {
    const pod: Pod = {
      lines: [],
      dropped: 0,
      ended: false,
      wake: new Set(),
      password: randomBytes(18).toString('base64url'),
      game: new PaperGame({ maxPlayers: playersMax, log: (line, level) => this.write(name, line, level) }),
    };
    this.#pods.set(name, pod);
    return pod;
  }

  #end(name: string, pod: Pod): void {
    pod.ended = true;
    for (const wake of pod.wake) wake();
    void pod.rcon?.then((listener) => listener.close(), () => undefined);
    if (this.#pods.get(name) === pod) this.#pods.delete(name);
  }
}
