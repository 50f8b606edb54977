import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, unlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from '../../../lib/logger.js';
import { ConsoleLog } from '../console-log.js';

/**
 * One game server as a child process: `sh -c <command>` in the server's folder, in a process group
 * of its own (so a signal reaches the game under any wrapper the command starts), with a clean
 * environment, its stdout and stderr as the console log, and a pid file that lets the next life of
 * the service end it if this one dies without stopping it.
 */

/** What a game's process inherits: nothing of the service's environment but these. */
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'JAVA_HOME'] as const;

export function gameEnvironment(folder: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { HOME: folder };
  for (const name of INHERITED) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

/** The start time of a process in clock ticks since boot (/proc/<pid>/stat field 22): a pid plus this names one process. */
function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export interface GameProcessOptions {
  name: string;
  folder: string;
  command: string;
  env: NodeJS.ProcessEnv;
  /** Where the pid file goes (one per server). */
  pidDir: string;
  now: () => Date;
  /** Each console line as it comes (the cluster looks for the game's readiness lines). */
  onLine?: (line: string) => void;
}

export class GameProcess {
  readonly log: ConsoleLog;
  readonly #child: ChildProcess;
  readonly #pidFile: string;
  /** Resolves with the exit (code or signal) once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #gone = false;

  private constructor(options: GameProcessOptions, pidFile: string) {
    this.log = new ConsoleLog(options.now);
    this.#pidFile = pidFile;
    this.#child = spawn('/bin/sh', ['-c', options.command], {
      cwd: options.folder,
      env: options.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Kept open and never written: some games read a closed console as "stop".
    this.#child.stdin?.on('error', () => undefined);
    let open = 2;
    const closeOne = () => {
      open -= 1;
      if (open === 0) this.log.end();
    };
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      if (!stream) {
        closeOne();
        continue;
      }
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      lines.on('line', (line) => {
        this.log.write(line);
        options.onLine?.(line);
      });
      lines.on('close', closeOne);
    }
    this.exited = new Promise((resolve) => {
      this.#child.once('error', (err) => {
        this.log.write(`[felis] the command could not be run: ${err.message}`);
        this.#gone = true;
        resolve({ code: null, signal: null });
      });
      this.#child.once('exit', (code, signal) => {
        this.#gone = true;
        // Whatever the command left in its group (a wrapper's children) goes with it.
        if (this.#child.pid !== undefined) signalGroup(this.#child.pid, 'SIGKILL');
        this.#forgetPid();
        resolve({ code, signal });
      });
    });
  }

  /** Removes the pid file if it still names this process (at once, so no later start's file is taken for it). */
  #forgetPid(): void {
    try {
      if (readFileSync(this.#pidFile, 'utf8').startsWith(`${this.#child.pid} `)) unlinkSync(this.#pidFile);
    } catch {
      // Never written, or gone already.
    }
  }

  static async start(options: GameProcessOptions): Promise<GameProcess> {
    await mkdir(options.pidDir, { recursive: true });
    const pidFile = join(options.pidDir, `${options.name}.pid`);
    const game = new GameProcess(options, pidFile);
    const pid = game.pid;
    if (pid !== undefined) await writeFile(pidFile, `${pid} ${startTicks(pid) ?? ''}\n`);
    return game;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return !this.#gone;
  }

  /** Sends a signal to the game's whole process group. */
  signal(signal: NodeJS.Signals): void {
    if (this.#gone || this.#child.pid === undefined) return;
    signalGroup(this.#child.pid, signal);
  }

  /** Resolves true when the process ended within `ms`. */
  async waitExit(ms: number): Promise<boolean> {
    if (this.#gone) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const ended = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return ended;
  }
}

/**
 * Ends the games a previous life of the service left running (it was killed before it could stop
 * them): each pid file names a process by pid and start time, so a pid the system gave to another
 * process since is never signalled. A TERM first (the game saves), a KILL after `graceMs`.
 */
export async function endLeftoverGames(pidDir: string, graceMs: number, log: Logger): Promise<string[]> {
  let files: string[];
  try {
    files = (await readdir(pidDir)).filter((f) => f.endsWith('.pid'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const ended: string[] = [];
  await Promise.all(
    files.map(async (file) => {
      const path = join(pidDir, file);
      // A game that ends as this runs removes its own file.
      const text = await readFile(path, 'utf8').catch(() => '');
      const [pidText, ticks] = text.trim().split(' ');
      const pid = Number(pidText);
      if (Number.isSafeInteger(pid) && pid > 1 && ticks && startTicks(pid) === ticks) {
        const server = file.slice(0, -'.pid'.length);
        log.warn({ server, pid }, 'a game a previous life of the service left running is stopped (it is started again if it should run)');
        signalGroup(pid, 'SIGTERM');
        const deadline = Date.now() + graceMs;
        while (startTicks(pid) === ticks && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        signalGroup(pid, 'SIGKILL');
        ended.push(server);
      }
      await rm(path, { force: true });
    }),
  );
  return ended;
}
