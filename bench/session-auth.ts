/**
 * In-process cost of the session check: GET /api/v1/me (cookie → sha-256 → one indexed join,
 * plus the once-a-minute touch) against /healthz on the same app, on embedded PGlite.
 *
 *   npx tsx bench/session-auth.ts
 */
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { users } from '../src/db/schema/accounts.js';
import { mintSession } from '../src/features/accounts/sessions/session-service.js';
import { createMetrics } from '../src/http/metrics.js';
import { createLogger } from '../src/lib/logger.js';
import { assembleDeps } from '../src/service.js';

const N = 2000;

async function main(): Promise<void> {
  const config = loadConfig({ DATABASE_URL: 'memory:', PANEL_HOST: 'panel.felis.test', CONSOLE_HOST: 'console.felis.test', LOG_LEVEL: 'silent' });
  const database = await openDatabase({ url: config.databaseUrl, dataDir: '/tmp' });
  const deps = assembleDeps({ config, log: createLogger('silent'), database, metrics: createMetrics({ defaultMetrics: false }) });
  const now = new Date();
  const [user] = await database.db.insert(users).values({ username: 'bench', createdAt: now, updatedAt: now }).returning();
  const { token } = await mintSession(deps, database.db, { userId: user!.id, host: 'panel.felis.test', method: 'passkey' });
  const { external } = createApps(deps);
  const headers = { Host: 'panel.felis.test', Cookie: `svc_session=${token}` };

  const measure = async (path: string, h: Record<string, string>): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const res = await external.request(path, { headers: h });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b);
  };
  const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!.toFixed(3);
  await measure('/api/v1/me', headers); // warm-up
  for (const [path, h] of [['/healthz', {}], ['/api/v1/me', headers]] as const) {
    const xs = await measure(path, h);
    console.log(`${path}: p50 ${pct(xs, 0.5)} ms, p99 ${pct(xs, 0.99)} ms over ${N} sequential requests`);
  }
  await database.close();
}

void main();
