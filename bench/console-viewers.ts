/**
 * Console fan-out bench: 1,000 EventSource-like viewers on one server's console, on a real port.
 * The service runs in this process (so its memory and its followed pod logs can be read); the
 * viewers run in a child process. It prints the server's memory per viewer (heap and RSS, after
 * a GC when `--expose-gc` is given), how many pod logs are followed (one), and how long one line
 * takes to reach every viewer.
 *
 *   node --expose-gc --import tsx bench/console-viewers.ts      (BENCH_VIEWERS=1000)
 */
import { spawn } from 'node:child_process';
import { SimulatedCluster } from '../src/adapters/cluster/simulated.js';
import type { PodLogOptions } from '../src/adapters/cluster/types.js';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { serverClaims } from '../src/db/schema/servers.js';
import { openDatabase } from '../src/db/client.js';
import { createLogger } from '../src/lib/logger.js';
import { serve } from '../src/runtime/serve.js';
import { assembleDeps } from '../src/service.js';
import { createUser, signIn } from '../test/helpers/sessions.js';

const VIEWERS = Number(process.env.BENCH_VIEWERS ?? 1000);
const SERVER = 'bench';

const gc = (globalThis as { gc?: () => void }).gc;
function memory() {
  gc?.();
  gc?.();
  const { heapUsed, external } = process.memoryUsage();
  return { heapUsed, external };
}

const CLIENT = `
const http = require('node:http');
const { port, path, cookies, host } = JSON.parse(process.env.BENCH_CLIENT);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
let ready = 0, marked = 0, next = 0;
// Fifty dials at a time: a thousand at once would overflow the listen backlog and time SYN retries.
function dial() {
  if (next >= cookies.length) return;
  const cookie = cookies[next++];
  const req = http.get({ port, path, agent, headers: { Cookie: cookie, Host: host, Accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) { console.error('status', res.statusCode); process.exit(1); }
    dial();
    let first = true, seen = false;
    res.setEncoding('utf8');
    res.on('data', (text) => {
      if (first && text.includes('Done (')) { first = false; if (++ready === cookies.length) process.stdout.write('ready\\n'); }
      if (!seen && text.includes('MARKER')) { seen = true; if (++marked === cookies.length) process.stdout.write('marked\\n'); }
    });
  });
  req.on('error', (err) => { console.error(err.message); process.exit(1); });
}
for (let i = 0; i < 50; i++) dial();
`;

async function main() {
  const config = loadConfig({ DATABASE_URL: 'memory:', PANEL_HOST: 'panel.bench.test', LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv);
  const log = createLogger('warn');
  const database = await openDatabase({ url: 'memory:', dataDir: '.' });
  const cluster = new SimulatedCluster({ startDelayMs: 0 });
  let followed = 0;
  const podLogs = cluster.podLogs.bind(cluster);
  cluster.podLogs = (name: string, options: PodLogOptions) => {
    if (options.follow) followed += 1;
    return podLogs(name, options);
  };
  cluster.addServer({ name: SERVER, subdomain: SERVER, desiredState: 'Running', labels: {} });
  cluster.tick();
  const deps = assembleDeps({ config, log, database, cluster });
  const owner = await createUser(deps);
  await database.db.insert(serverClaims).values({ serverName: SERVER, subdomain: SERVER, userId: owner.id, claimedAt: new Date() });
  // Eight streams per account at most: staff accounts, eight viewers each.
  const cookies: string[] = [];
  for (let i = 0; cookies.length < VIEWERS; i++) {
    const staff = await createUser(deps, { role: 'admin' });
    const { cookie } = await signIn(deps, { userId: staff.id, host: 'panel.bench.test' });
    for (let k = 0; k < 8 && cookies.length < VIEWERS; k++) cookies.push(cookie);
  }
  const listening = await serve({ fetch: createApps(deps).external.fetch, port: 0, host: '127.0.0.1', log });
  const before = memory();

  const child = spawn(process.execPath, ['-e', CLIENT], {
    env: { ...process.env, BENCH_CLIENT: JSON.stringify({ port: listening.port, path: `/api/v1/servers/${SERVER}/console`, cookies, host: 'panel.bench.test' }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waitFor = (what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => lines.includes(what) && resolve();
      child.stdout.on('data', (chunk: Buffer) => {
        lines.push(...chunk.toString().trim().split('\n'));
        check();
      });
      child.once('exit', (code) => reject(new Error(`viewers exited with ${code}`)));
    });
  const attachStarted = performance.now();
  await waitFor('ready');
  const attachMs = performance.now() - attachStarted;
  const after = memory();
  const fanoutStarted = performance.now();
  cluster.pods.write(SERVER, 'MARKER');
  await waitFor('marked');
  const fanoutMs = performance.now() - fanoutStarted;

  const perViewer = (a: number, b: number) => Math.round((b - a) / VIEWERS);
  console.log(
    JSON.stringify(
      {
        viewers: VIEWERS,
        followed_pod_logs: followed,
        upstreams_open: deps.consoleLogs.upstreams,
        heap_bytes_per_viewer: perViewer(before.heapUsed, after.heapUsed),
        external_bytes_per_viewer: perViewer(before.external, after.external),
        attach_all_ms: Math.round(attachMs),
        one_line_to_all_ms: Math.round(fanoutMs),
        gc: gc !== undefined,
      },
      null,
      2,
    ),
  );
  child.kill();
  deps.consoleLogs.close();
  await listening.close(1000);
  await cluster.close();
  await database.close();
}

await main();
