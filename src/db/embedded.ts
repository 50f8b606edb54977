import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { singleProcessChanges } from './change-feed.js';
import { lockEmbeddedDatabase } from './embedded-lock.js';
import { DatabaseGuard } from './guard.js';
import { guardPostgres } from './guarded-clients.js';
import { findSeed, keepSeed } from './embedded-seed.js';
import { migratePostgres } from './migrate.js';
import * as schema from './schema/index.js';
import { guardLogging, withTimeout, type Database, type DatabaseHandle, type OpenDatabaseOptions } from './client.js';

/** How long the thread may take to open the database (a large folder recovers its WAL first). */
const START_TIMEOUT_MS = 60_000;
/**
 * How long a new folder's initdb may take: minutes of a loaded small machine's CPU (over 60 s on
 * 2 cores at load 23, docs/notes/issue-46-hot-path-memory.md), and it runs once.
 */
const INITDB_TIMEOUT_MS = 300_000;
/** How long a crashed thread is left before it is started again (a crash at start does not spin). */
const RESTART_DELAY_MS = 250;
/** The guard's probe: PGlite answers a `select 1` on the thread within this. */
const PROBE_TIMEOUT_MS = 1_500;

// The thread's file: `.ts` beside this one under tsx, Bun and the tests, `.js` in dist/.
const workerUrl = new URL(`./embedded-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

interface Reply {
  id: number;
  ok: boolean;
  message?: string;
  bytes?: ArrayBuffer;
}

/** The embedded database could not be opened on its thread. */
export class EmbeddedDatabaseFailed extends Error {
  override name = 'EmbeddedDatabaseFailed';
}

/**
 * One life of the database thread: started, asked on its port, and gone when it exits (a close, a
 * crash). Requests pending when it exits are rejected, so a caller never waits on a dead thread.
 */
class EmbeddedThread {
  readonly exited: Promise<void>;
  /** What killed the thread, when something did. */
  failure: Error | undefined;
  #worker: Worker;
  #pending = new Map<number, { resolve: (reply: Reply) => void; reject: (err: Error) => void }>();
  #next = 1;
  #gone = false;

  constructor(dir: string | undefined, socket: string, seed?: Uint8Array<ArrayBuffer>) {
    this.#worker = new Worker(workerUrl, { workerData: { dir, socket, maxConnections: 8, ...(seed ? { seed } : {}) } });
    this.exited = new Promise((resolve) => {
      this.#worker.once('exit', () => {
        this.#gone = true;
        for (const { reject } of this.#pending.values()) reject(Object.assign(new Error('the embedded database thread stopped'), { code: 'CONNECTION_CLOSED' }));
        this.#pending.clear();
        resolve();
      });
    });
    this.#worker.on('error', (err) => {
      this.failure = err; // its exit follows; the owner logs it
    });
    this.#worker.on('message', (message: Reply) => {
      const waiting = this.#pending.get(message.id);
      if (!waiting) return;
      this.#pending.delete(message.id);
      if (message.ok) waiting.resolve(message);
      else waiting.reject(new Error(message.message));
    });
  }

  /** Resolves once the thread listens on its socket; rejects with why it could not. */
  ready(timeoutMs = START_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let onMessage: ((message: { op?: string; message?: string; code?: string }) => void) | undefined;
    return new Promise<void>((resolve, reject) => {
      onMessage = (message) => {
        if (message.op === 'ready') resolve();
        if (message.op === 'failed') reject(Object.assign(new EmbeddedDatabaseFailed(message.message ?? 'the embedded database did not open'), { code: message.code }));
      };
      this.#worker.on('message', onMessage);
      void this.exited.then(() => reject(new EmbeddedDatabaseFailed('the embedded database thread stopped while opening')));
      timer = setTimeout(() => reject(new EmbeddedDatabaseFailed(`the embedded database did not open within ${timeoutMs} ms`)), timeoutMs);
    }).finally(() => {
      clearTimeout(timer);
      if (onMessage) this.#worker.off('message', onMessage);
    });
  }

  ask(op: 'ping' | 'dump' | 'close' | 'crash'): Promise<Reply> {
    if (this.#gone) return Promise.reject(Object.assign(new Error('the embedded database thread stopped'), { code: 'CONNECTION_CLOSED' }));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, op });
    });
  }

  terminate(): Promise<number> {
    return this.#worker.terminate();
  }
}

/**
 * A folder without a database yet is made from the seed (`seedFor`: the kept copy of a new,
 * migrated database, or one made now) and migrated on a thread of its own that is then ended: the initdb and the migrations grow PGlite's WebAssembly memory to several
 * hundred MiB, which never shrinks while its thread lives, and ending the thread returns it. The
 * service's thread then opens the made folder as on any restart, its own migration finding nothing
 * to do (docs/notes/issue-29-speed.md: first start 579 -> ~470 MiB RSS with the initdb moved;
 * docs/notes/issue-46-hot-path-memory.md: the migrations moved too).
 */
async function initializeFolder(dir: string, socket: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  await migratedOnce(new EmbeddedThread(dir, socket, await seedFor(socket)), socket, async () => {});
}

/**
 * The tarball a new database starts from (src/db/embedded-seed.ts): the machine's kept copy, or,
 * on a machine without one, a database made in memory (initdb and the migrations) on a thread of
 * its own, then kept. Made in memory, not in the new folder, so that it holds PostgreSQL's files
 * only (a folder also holds the opener's lock file).
 */
async function seedFor(socket: string): Promise<Uint8Array<ArrayBuffer>> {
  const kept = findSeed();
  if (kept) return kept;
  const seed = await migratedOnce(new EmbeddedThread(undefined, socket), socket, async (thread) => new Uint8Array((await thread.ask('dump')).bytes!));
  keepSeed(seed);
  return seed;
}

/** A thread of its own for a new database: opened, migrated, `then` done with it, closed and ended. */
async function migratedOnce<T>(thread: EmbeddedThread, socket: string, then: (thread: EmbeddedThread) => Promise<T>): Promise<T> {
  try {
    await thread.ready(INITDB_TIMEOUT_MS);
    await migratePostgres({ path: socket, onnotice: () => {}, connect_timeout: 3 });
    const done = await then(thread);
    await withTimeout(thread.ask('close'), 10_000, 'the embedded database');
    return done;
  } finally {
    await thread.terminate();
  }
}

export interface EmbeddedDatabaseHandle extends DatabaseHandle {
  /** Tests only: the database thread dies as on a fault, and is started again. */
  crashForTest(): Promise<void>;
}

/**
 * The embedded database (PGlite) on a thread of its own, reached with postgres-js over a private
 * Unix socket: the same driver, migrator and guard as PostgreSQL, and a statement never blocks the
 * service's event loop. A thread that dies (a fault in PGlite) fails what was in flight as a lost
 * connection (the guard answers 503 meanwhile) and is started again on the same folder; the guard's
 * probe lets statements through once it answers.
 */
export async function openEmbedded(dir: string | undefined, log?: OpenDatabaseOptions['log']): Promise<EmbeddedDatabaseHandle> {
  if (dir) mkdirSync(dir, { recursive: true });
  const unlock = dir ? lockEmbeddedDatabase(dir) : () => {};
  // A folder only this user can enter: the socket takes no password.
  const socketDir = mkdtempSync(join(tmpdir(), 'felis-db-'));
  const socket = join(socketDir, '.s.PGSQL.5432');
  let closing = false;
  // A new folder is made from the seed here; a throw-away database (`memory:`) is loaded from it at
  // each life of its thread.
  let seed: Uint8Array<ArrayBuffer> | undefined;
  try {
    if (dir === undefined) seed = await seedFor(socket);
    else await initializeFolder(dir, socket);
  } catch (err) {
    rmSync(socketDir, { recursive: true, force: true });
    unlock();
    throw err;
  }
  const lifeOf = () => new EmbeddedThread(dir, socket, seed);
  let thread = lifeOf();
  let restarting: Promise<void> | undefined;

  const restart = (): Promise<void> => {
    restarting ??= (async () => {
      while (!closing) {
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS).unref());
        if (closing) return;
        const next = lifeOf();
        try {
          await next.ready();
          if (closing) {
            await withTimeout(next.ask('close'), 10_000, 'the embedded database').catch(() => {});
            await next.terminate();
            return;
          }
          thread = next;
          watch(next);
          log?.info({ dependency: 'database' }, 'embedded database thread started again');
          return;
        } catch (err) {
          log?.warn({ dependency: 'database', err }, 'embedded database thread did not start again: trying once more');
          await next.terminate().catch(() => {});
        }
      }
    })().finally(() => {
      restarting = undefined;
    });
    return restarting;
  };
  const watch = (life: EmbeddedThread) => {
    void life.exited.then(() => {
      if (closing || life !== thread) return;
      log?.warn({ dependency: 'database', err: life.failure }, 'embedded database thread stopped: starting it again');
      void restart();
    });
  };

  const cleanup = () => {
    rmSync(socketDir, { recursive: true, force: true });
    unlock();
  };
  try {
    await thread.ready();
  } catch (err) {
    await thread.terminate().catch(() => {});
    cleanup();
    throw err;
  }
  watch(thread);

  const connection: postgres.Options<Record<string, postgres.PostgresType>> = { path: socket, onnotice: () => {}, connect_timeout: 3 };
  const guard = new DatabaseGuard({
    probe: () => withTimeout(thread.ask('ping').then(() => undefined), PROBE_TIMEOUT_MS, 'the embedded database'),
    ...guardLogging(log),
  });
  // One connection: PGlite runs one statement at a time anyway, and one connection keeps each
  // extended-protocol exchange (parse, bind, execute, sync) whole on PGlite's single backend.
  const client = postgres({ ...connection, max: 1, idle_timeout: 0 });
  const db = drizzlePostgres(guardPostgres(client, guard), { schema }) as unknown as Database;
  return {
    db,
    kind: 'pglite',
    source: { kind: 'pglite', client: { dumpDataDir: async () => new Blob([(await thread.ask('dump')).bytes!]) } },
    dir,
    guard,
    ping: (timeoutMs = 2000) =>
      guard.down ? Promise.reject(new Error('database does not answer')) : withTimeout(client`select 1`.then(() => undefined), timeoutMs, 'database'),
    migrate: () => migratePostgres(connection),
    // One process holds the folder (felis.lock): no other can commit a change.
    changeFeed: () => singleProcessChanges,
    crashForTest: async () => {
      const life = thread;
      await life.ask('crash').catch(() => {});
      await life.exited;
    },
    close: async () => {
      closing = true;
      guard.close();
      try {
        await client.end({ timeout: 5 });
        await restarting; // a thread being started again is closed by the loop itself
        await withTimeout(thread.ask('close'), 10_000, 'the embedded database').catch(() => {});
        await thread.terminate();
      } finally {
        cleanup();
      }
    },
  };
}
