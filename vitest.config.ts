import { defineConfig } from 'vitest/config';
import { isDriverTypeFetchFailure } from './src/db/driver-faults.js';

/**
 * Files that keep a fresh process each: the cross-cutting suites (processes, faults, a browser, the
 * real API server), the areas whose timers or streams have been seen to starve a later file in a
 * shared worker (the build log copier on PostgreSQL, issue 25's note), and files that change
 * process-wide state. Every other file shares its worker's module graph (isolate: false): importing
 * the service's modules once per worker instead of once per file was half a run's time (20 route
 * suites: 268 s -> 133 s wall, import 89 s -> 12 s, in one sitting; docs/notes/suite-time.md).
 * Each file still gets its own database copy (test/helpers/database.ts).
 */
const ISOLATED = [
  'test/**/*.test.ts',
  'src/features/builds/**/*.test.ts',
  'src/features/console/**/*.test.ts',
  'src/features/worlds/jobs/**/*.test.ts',
  'src/coordination/**/*.test.ts',
  'src/db/**/*.test.ts',
  'src/adapters/cluster/kubernetes/**/*.test.ts',
  'src/features/servers/cache.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    teardownTimeout: 10_000,
    reporters: process.env.CI ? ['default'] : ['default'],
    // The database driver's uncatchable rejection of a connection dropped as it opened (an outage
    // test's server stopping or starting): the service logs it (src/main.ts), so the run does too.
    onUnhandledError: (error) => (isDriverTypeFetchFailure(error) ? false : undefined),
    projects: [
      { extends: true, test: { name: 'shared', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
