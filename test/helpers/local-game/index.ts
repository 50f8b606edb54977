import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServerResource, ServerWatchEvent } from '../../../src/adapters/cluster/types.js';

/** The stand-in game program (stand-in.ts beside this file). */
export const STAND_IN = fileURLToPath(new URL('./stand-in.ts', import.meta.url));

/**
 * LOCAL_SERVER_COMMAND that runs the stand-in with this Node (which strips its types), with
 * `env` set in front (the game's environment is otherwise the clean one the cluster gives).
 */
export function standInCommand(env: Record<string, string> = {}): string {
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${v} `).join('');
  return `${assignments}exec '${process.execPath}' '${STAND_IN}'`;
}

/** A port range of 200 ports at a random base, so that parallel files rarely meet (a held port is skipped anyway). */
export function testPortRange(): { first: number; last: number } {
  const first = 20_000 + Math.floor(Math.random() * 200) * 200;
  return { first, last: first + 199 };
}

/** Whether a process with this pid exists (signal 0), and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The pids of live processes whose working folder is `folder` or under it (the process listing, from /proc). */
export function processesIn(folder: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if ((cwd === folder || cwd.startsWith(`${folder}/`)) && processAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

interface Watchable {
  server(name: string): ServerResource | undefined;
  watchServers(rv: string, onEvent: (event: ServerWatchEvent) => void, onError: (err: Error) => void): { stop(): void };
}

/** Resolves with the server once `test` holds for it (now or at a later change); rejects after `ms`. */
export function until(cluster: Watchable, name: string, test: (server: ServerResource) => boolean, ms = 15_000): Promise<ServerResource> {
  const now = cluster.server(name);
  if (now && test(now)) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      watch.stop();
      reject(new Error(`${name} never matched; last: ${JSON.stringify(cluster.server(name)?.status)}`));
    }, ms);
    const watch = cluster.watchServers('0', (event) => {
      if (event.type !== 'DELETED' && event.server.spec.name === name && test(event.server)) {
        clearTimeout(timer);
        watch.stop();
        resolve(event.server);
      }
    }, () => undefined);
  });
}
