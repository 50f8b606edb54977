/**
 * The embedded database's thread (src/db/embedded.ts starts it): PGlite runs here, behind
 * `@electric-sql/pglite-socket`, so that its statements, which block the thread they run on, never
 * block the service's event loop. The service talks to it over a Unix socket with postgres-js, as
 * to any PostgreSQL. Besides the socket, the parent asks on the message port: `ping` (the guard's
 * probe: does PGlite answer?), `dump` (the data folder as a gzipped tarball, for bundles), `close`.
 *
 * Self-contained on purpose (packages and node: only): Node runs it as it is from `src/` under the
 * tests (type stripping) and from `dist/` when built; Bun runs either.
 */
import { rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

interface Start {
  /** The data folder; undefined for a throw-away in-memory database. */
  dir: string | undefined;
  /** The Unix socket to listen on. */
  socket: string;
  /** How many connections the socket takes at once (the service's pool, the migrator, a command). */
  maxConnections: number;
  /** A new database starts from this tarball instead of initdb (src/db/embedded-seed.ts). */
  seed?: Uint8Array<ArrayBuffer>;
}

type Request = { id: number; op: 'ping' } | { id: number; op: 'dump' } | { id: number; op: 'close' } | { id: number; op: 'crash' };

/** Settings for the embedded PostgreSQL (written to the data folder's postgresql.conf at each open). */
const EMBEDDED_POSTGRES_CONF = ['shared_buffers=32MB'];

const port = parentPort;
if (!port) throw new Error('embedded-worker.ts runs as a worker thread');
const start = workerData as Start;

let db: PGlite;
let server: PGLiteSocketServer;
try {
  // PostgreSQL's default buffer pool (128 MB) was most of the embedded database's resident memory;
  // the embedded default holds a small platform's data (10,000 servers are a few MB of rows), which
  // 32 MB keeps in memory. Measured in docs/notes/issue-29-speed.md (about 120 MiB less RSS).
  db = await PGlite.create(start.dir, { postgresqlconf: EMBEDDED_POSTGRES_CONF, ...(start.seed ? { loadDataDir: new Blob([start.seed]) } : {}) });
  // A socket left by a previous life of this thread (terminated, so it never closed it).
  rmSync(start.socket, { force: true });
  server = new PGLiteSocketServer({ db, path: start.socket, maxConnections: start.maxConnections });
  await server.start();
  port.postMessage({ op: 'ready' });
} catch (err) {
  port.postMessage({ op: 'failed', message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown }).code });
  throw err;
}

port.on('message', (request: Request) => {
  void answer(request).then(
    (reply) => port.postMessage({ id: request.id, ok: true, ...reply }, reply.transfer ?? []),
    (err: unknown) => port.postMessage({ id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) }),
  );
});

async function answer(request: Request): Promise<{ bytes?: ArrayBuffer; transfer?: ArrayBuffer[] }> {
  switch (request.op) {
    case 'ping':
      await db.query('select 1');
      return {};
    case 'dump': {
      const bytes = await (await db.dumpDataDir('gzip')).arrayBuffer();
      return { bytes, transfer: [bytes] };
    }
    case 'close':
      await server.stop();
      if (!db.closed) await db.close();
      rmSync(start.socket, { force: true });
      return {};
    case 'crash':
      // Tests only: the thread dies as it would on a fault in PGlite, without closing anything.
      setImmediate(() => {
        throw new Error('embedded database thread crashed on request');
      });
      return {};
  }
}
