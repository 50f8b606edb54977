/**
 * The server list page over 1,000 servers, on the compiled service (`npm run bench:panel`):
 *
 * - time to first byte of `GET /servers` (the page) and of `GET /api/v1/me/servers` (the API
 *   answer the page is rendered from: its baseline in the same run), one request at a time,
 *   interleaved, BENCH_REQUESTS (300) of each after a warm-up; p50 and p95, and their ratio;
 * - the weight of the page's scripts and styles as served (bytes, and gzip -6 as an edge would).
 *
 * One target process (bench/panel-target.ts); BENCH_SERVERS (1,000) sets the fleet.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const script = (name: string) => fileURLToPath(new URL(`./${name}${extname(import.meta.url)}`, import.meta.url));
const HOST = 'panel.felis.test';

const child = spawn(process.execPath, [...process.execArgv, script('panel-target')], { stdio: ['ignore', 'pipe', 'inherit'] });
const { port, cookie } = await new Promise<{ port: number; cookie: string }>((resolve, reject) => {
  let pending = '';
  child.stdout!.on('data', (d: Buffer) => {
    pending += d.toString();
    const nl = pending.indexOf('\n');
    if (nl >= 0) resolve(JSON.parse(pending.slice(0, nl)) as { port: number; cookie: string });
  });
  child.once('exit', (code) => reject(new Error(`the target exited (${code})`)));
});

/** One request: milliseconds to the answer's head (first byte), and the whole body. */
function fetchTimed(path: string): Promise<{ ttfb: number; status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: HOST, Cookie: cookie } }, (res) => {
      const ttfb = performance.now() - started;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ttfb, status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

try {
  const targets = { page: '/servers', api: '/api/v1/me/servers' } as const;
  const times: Record<keyof typeof targets, number[]> = { page: [], api: [] };
  for (let i = 0; i < 20; i++) for (const path of Object.values(targets)) await fetchTimed(path);
  for (let i = 0; i < REQUESTS; i++) {
    for (const key of (i % 2 ? ['api', 'page'] : ['page', 'api']) as Array<keyof typeof targets>) {
      const r = await fetchTimed(targets[key]);
      if (r.status !== 200) throw new Error(`${targets[key]} answered ${r.status}`);
      times[key].push(r.ttfb);
    }
  }
  const page = await fetchTimed(targets.page);
  const html = page.body.toString();
  const rows = (html.match(/data-live-server=/g) ?? []).length;
  const assets = [...html.matchAll(/<(?:script[^>]*src|link[^>]*href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  let raw = 0;
  let gz = 0;
  const lines: string[] = [];
  for (const path of assets) {
    const { body } = await fetchTimed(path);
    raw += body.length;
    gz += gzipSync(body, { level: 6 }).length;
    lines.push(`  ${path}: ${body.length} bytes, ${gzipSync(body, { level: 6 }).length} gzipped`);
  }
  const f = (n: number) => n.toFixed(2);
  process.stdout.write(
    [
      `server list page over ${rows} servers (${REQUESTS} requests each, one at a time, interleaved)`,
      `  page  GET /servers            TTFB p50 ${f(quantile(times.page, 0.5))} ms, p95 ${f(quantile(times.page, 0.95))} ms; HTML ${page.body.length} bytes, ${gzipSync(page.body, { level: 6 }).length} gzipped`,
      `  api   GET /api/v1/me/servers  TTFB p50 ${f(quantile(times.api, 0.5))} ms, p95 ${f(quantile(times.api, 0.95))} ms`,
      `  ratio page/api: p50 ${f(quantile(times.page, 0.5) / quantile(times.api, 0.5))}, p95 ${f(quantile(times.page, 0.95) / quantile(times.api, 0.95))}`,
      `scripts and styles of the page: ${assets.length} files, ${raw} bytes, ${gz} gzipped`,
      ...lines,
      '',
    ].join('\n'),
  );
} finally {
  child.kill('SIGTERM');
}
