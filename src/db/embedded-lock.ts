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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrno(err, 'EPERM');
  }
}

/**
 * One process at a time on an embedded database folder: PGlite takes no lock of its own, and two
 * processes writing one folder (a second `npm start`, `npm run dev` beside it, a command while the
 * service runs) corrupt it. The lock is a file naming its holder's pid; a holder that is gone (a
 * crash, a kill) leaves a stale file that the next opener takes over. The same process may open
 * the folder again (tests reopen what they closed). Returns the release.
 */
export function lockEmbeddedDatabase(dir: string): () => void {
  const file = join(dir, LOCK_FILE);
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
    if (holder > 0 && alive(holder)) throw new EmbeddedDatabaseBusy(dir, holder);
    try {
      unlinkSync(file); // stale: its holder is gone
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }
}
