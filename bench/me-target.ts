/**
 * One server under test for bench/me.ts, in its own process:
 *
 *   me-target.js full  <pglite|postgres>   the external face (createApps): GET /api/v1/me
 *   me-target.js floor <pglite|postgres>   a bare Hono route that parses the same cookie, hashes it
 *                                          and runs the same one indexed query through the same driver
 *
 * Each opens its own database (PGlite in memory, or a fresh database on BENCH_DATABASE_URL's
 * server), signs one user in, announces {"port", "cookie"} once listening, and exits on SIGTERM.
 */
import { pino } from 'pino';
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import postgres from 'postgres';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { users } from '../src/db/schema/accounts.js';
import { mintSession } from '../src/features/accounts/sessions/session-service.js';
import { sha256Hex } from '../src/lib/secrets.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { assembleDeps } from '../src/service.js';

const [role, kind] = process.argv.slice(2);
if ((role !== 'full' && role !== 'floor') || (kind !== 'pglite' && kind !== 'postgres')) {
  process.stderr.write('usage: me-target.js full|floor pglite|postgres\n');
  process.exit(2);
}

const HOST = 'panel.felis.test';
const FLOOR_SQL =
  'select s.host, s.expires_at, s.last_seen_at, s.revoked_at, u.id, u.role, u.disabled, u.deleted_at, u.in_setup, u.username, u.email, u.email_verified, u.must_change_password ' +
  'from sessions s join users u on u.id = s.user_id where s.token_hash = $1 limit 1';

async function databaseUrl(): Promise<string> {
  if (kind === 'pglite') return 'memory:';
  const server = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `felis_bench_${role}_${process.pid}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

const url = await databaseUrl();
const config = loadConfig({ DATABASE_URL: url, PANEL_HOST: HOST, CONSOLE_HOST: 'console.felis.test', ROOT_DOMAIN: 'felis.test', LOG_LEVEL: 'info' });
const database = await openDatabase({ url, dataDir: '/tmp' });
const log = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }));
const deps = assembleDeps({ config, log, database });
const now = new Date();
const [user] = await database.db.insert(users).values({ username: 'bench', createdAt: now, updatedAt: now }).returning();
const { token } = await mintSession(deps, database.db, { userId: user!.id, host: HOST, method: 'passkey' });

function floor() {
  // The same driver the service uses: PGlite's client, or postgres-js, given the same SQL text.
  const run: (hash: string) => Promise<unknown[]> =
    kind === 'pglite'
      ? async (hash) => (await (database.db as unknown as { $client: { query(q: string, p: unknown[]): Promise<{ rows: unknown[] }> } }).$client.query(FLOOR_SQL, [hash])).rows
      : ((client) => (hash: string) => client.unsafe(FLOOR_SQL, [hash], { prepare: true }) as unknown as Promise<unknown[]>)(postgres(url, { max: 10, onnotice: () => {} }));
  return new Hono().get('/api/v1/me', async (c) => {
    const cookie = getCookie(c, 'svc_session');
    const [row] = cookie ? await run(sha256Hex(cookie)) : [];
    return row ? c.json(row) : c.json({ error: { code: 'unauthorized' } }, 401);
  });
}

const fetch = role === 'full' ? createApps(deps).external.fetch : floor().fetch;
const { port } = await serve({ fetch, port: 0, host: '127.0.0.1', log });
process.once('SIGTERM', () => void database.close().finally(() => process.exit(0)));
process.stdout.write(`${JSON.stringify({ ready: true, port, cookie: `svc_session=${token}` })}\n`);
