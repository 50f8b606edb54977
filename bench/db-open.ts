/**
 * Start-up of the embedded database alone, on the compiled output: open and migrate a fresh
 * in-memory PGlite in the service's thread (the previous path) and on its own thread behind the
 * socket (src/db/embedded.ts), BENCH_ROUNDS (3) times each, alternating; prints the medians.
 *
 *   npx tsc -p bench/tsconfig.json && node dist-bench/bench/db-open.js
 */
import { openDatabase, openPglite } from '../src/db/client.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const times: Record<'inprocess' | 'thread', number[]> = { inprocess: [], thread: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of ['inprocess', 'thread'] as const) {
    const started = performance.now();
    const handle =
      mode === 'inprocess'
        ? await openPglite(undefined).then(async (h) => {
            await h.migrate();
            return h;
          })
        : await openDatabase({ url: 'memory:', dataDir: '/tmp' });
    times[mode].push(performance.now() - started);
    await handle.close();
  }
}
const median = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
process.stdout.write(`open + migrate a fresh embedded database, median of ${ROUNDS}: in the service's thread ${median(times.inprocess)} ms, on its own thread ${median(times.thread)} ms\n`);
