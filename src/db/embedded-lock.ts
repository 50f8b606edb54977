import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../lib/errno.js';

/** The embedded database folder is open in another live process. */
export class EmbeddedDatabaseBusy extends Error {
  override name = 'EmbeddedDatabaseBusy';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`the embedded database in ${dir} is open in another Felis process (pid ${pid})`);
  }
}

export const LOCK_FILE = 'felis.lock';

/**
 * How long an opener waits for a holder that is going away: a SIGKILLed process takes a moment to
 * give back its memory, and stays a zombie until its parent reaps it (issue 43: a restart right
 * after a kill was refused 2 times of 4, naming the killed pid).
 */
export const DYING_HOLDER_WAIT_MS = 5_000;
const POLL_MS = 50;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return isErrno(err, 'EPERM');
  }
  return !exited(pid);
}

/** A zombie (exited, not yet reaped) holds nothing: Linux shows its state in /proc; elsewhere, unknown. */
function exited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * One process at a time on an embedded database folder: PGlite takes no lock of its own, and two
 * processes writing one folder (a second `npm start`, `npm run dev` beside it, a command while the
 * service runs) corrupt it. The lock is a file naming its holder's pid; a holder that is gone (a
 * crash, a kill) leaves a stale file that the next opener takes over, after waiting up to
 * DYING_HOLDER_WAIT_MS for a holder still on its way out. The same process may open
 * the folder again (tests reopen what they closed). Returns the release.
 */
export function lockEmbeddedDatabase(dir: string, options: { waitMs?: number } = {}): () => void {
  const file = join(dir, LOCK_FILE);
  const deadline = Date.now() + (options.waitMs ?? DYING_HOLDER_WAIT_MS);
  for (;;) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      return () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
    }
    let holder = 0;
    try {
      holder = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) continue; // released between the two calls
      throw err;
    }
    if (holder === process.pid) return () => {};
    if (holder > 0 && alive(holder)) {
      // Opening happens once, at start-up, before anything else runs: a short synchronous wait.
      if (Date.now() >= deadline) throw new EmbeddedDatabaseBusy(dir, holder);
      pause(POLL_MS);
      continue;
    }
    try {
      unlinkSync(file); // stale: its holder is gone
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }
}
