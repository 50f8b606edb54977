import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { RconEndpoint } from '../rcon/client.js';
import { ConsoleLog } from './console-log.js';
import { PaperGame } from './simulated-paper.js';
import { SimulatedRconListener } from './simulated-rcon.js';
import { ClusterNoPodError, type Phase, type PodLogLine, type PodLogOptions } from './types.js';

interface Pod {
  log: ConsoleLog;
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
    pod.log.write(`[${hhmmss(this.clock.now())} ${level}]: ${message}`);
  }

  /** The running pod's game (players, whitelist, bans, permissions); undefined without a pod. */
  game(name: string): PaperGame | undefined {
    return this.#pods.get(name)?.game;
  }

  async *logs(name: string, options: PodLogOptions): AsyncGenerator<PodLogLine> {
    const pod = this.#pods.get(name);
    if (!pod) throw new ClusterNoPodError(`${name} runs no pod`);
    yield* pod.log.read(options);
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

  #create(name: string, playersMax: number): Pod {
    const pod: Pod = {
      log: new ConsoleLog(() => this.clock.now()),
      password: randomBytes(18).toString('base64url'),
      game: new PaperGame({ maxPlayers: playersMax, log: (line, level) => this.write(name, line, level) }),
    };
    this.#pods.set(name, pod);
    return pod;
  }

  #end(name: string, pod: Pod): void {
    pod.log.end();
    void pod.rcon?.then((listener) => listener.close(), () => undefined);
    if (this.#pods.get(name) === pod) this.#pods.delete(name);
  }
}
