/**
 * `npm run bench:memory`: start-up time and resident memory of the compiled service on each
 * database, first start and with BENCH_SERVERS (10,000) servers, beside the floors of the same run
 * (bench/servers/memory-startup.ts). BENCH_DATABASES (pglite,postgres; postgres only when
 * BENCH_DATABASE_URL or the local PostgreSQL answers), BENCH_SETTLE_MS (3,000) tune a run;
 * BENCH_NODE_ARGS (the flags of package.json's start script) the service's node flags;
 * BENCH_JSON=1 prints the figures as JSON.
 */
import { measureMemoryStartup, type BenchDatabase } from './servers/memory-startup.js';
import { postgresAnswers } from './servers/postgres.js';

const wanted = (process.env.BENCH_DATABASES?.split(',') ?? ['pglite', 'postgres']) as BenchDatabase[];
const databases = wanted.includes('postgres') && !(await postgresAnswers()) ? wanted.filter((d) => d !== 'postgres') : wanted;
const figures = await measureMemoryStartup({
  servers: Number(process.env.BENCH_SERVERS ?? 10_000),
  settleMs: Number(process.env.BENCH_SETTLE_MS ?? 3_000),
  databases,
  ...(process.env.BENCH_NODE_ARGS !== undefined ? { nodeArgs: process.env.BENCH_NODE_ARGS.split(/\s+/).filter(Boolean) } : {}),
});
if (process.env.BENCH_JSON === '1') {
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
} else {
  const b = figures.baselines;
  process.stdout.write(
    [
      `memory-startup: ${figures.servers} servers, node ${figures.node_args.join(' ')} dist/main.js, RSS read ${figures.settle_ms} ms after healthy; MiB (peak = VmHWM)`,
      '| database | first start: start ms | CPU ms | RSS idle | peak | with servers: start ms | CPU ms | RSS | peak |',
      '|---|---|---|---|---|---|---|---|---|',
      ...figures.databases.map(
        (d) =>
          `| ${d.database} | ${d.first_start.start_ms} | ${d.first_start.start_cpu_ms} | ${d.first_start.rss_mib} | ${d.first_start.peak_mib} | ${d.with_servers.start_ms} | ${d.with_servers.start_cpu_ms} | ${d.with_servers.rss_mib} | ${d.with_servers.peak_mib} |`,
      ),
      '',
      '| floor | ready ms | RSS | peak |',
      '|---|---|---|---|',
      `| bare node | ${b.bare_node.ready_ms} | ${b.bare_node.rss_mib} | ${b.bare_node.peak_mib} |`,
      `| the service's modules imported, nothing started | ${b.service_modules.ready_ms} | ${b.service_modules.rss_mib} | ${b.service_modules.peak_mib} |`,
      `| embedded database alone, fresh folder | ${b.embedded_fresh.ready_ms} | ${b.embedded_fresh.rss_mib} | ${b.embedded_fresh.peak_mib} |`,
      `| embedded database alone, reopened | ${b.embedded_reopened.ready_ms} | ${b.embedded_reopened.rss_mib} | ${b.embedded_reopened.peak_mib} |`,
      '',
    ].join('\n'),
  );
}
