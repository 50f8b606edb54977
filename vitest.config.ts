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
const ISOLATED_SOURCES = [
  'src/features/builds/**/*.test.ts',
  'src/features/console/**/*.test.ts',
  'src/features/worlds/jobs/**/*.test.ts',
  'src/coordination/**/*.test.ts',
  'src/db/**/*.test.ts',
  'src/adapters/cluster/kubernetes/**/*.test.ts',
  'src/features/servers/cache.test.ts',
];

/**
 * The suites under test/ that need no process of their own: each builds its apps on createTestDeps
 * (or reads files, or runs a child process it waits for), closes what it listens on, and changes no
 * process-wide state. They share the worker as the route suites do (issue 46's note, wave 8: the first
 * 27 files 185 s -> 98 s wall, import 56 s -> 9 s, in one sitting). A new folder under test/ is
 * isolated until it is shown to be one of these.
 */
const SHARED_SUITES = [
  'test/architecture/**/*.test.ts',
  'test/config/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/deploy/compose.test.ts',
  'test/deploy/manifests.test.ts',
  'test/deploy/monitoring.test.ts',
  'test/local/settings.test.ts',
  'test/robustness/no-500.test.ts',
  'test/server/answer-headers.test.ts',
  'test/server/every-answer.test.ts',
  'test/server/request-header.test.ts',
  // In-process services (startTestService) and listeners, each stopped by its file's afterAll.
  'test/local/listener-abuse.test.ts',
  'test/server/body-rate.test.ts',
  'test/server/embedded-restart.test.ts',
  'test/server/java-client.test.ts',
  'test/server/slow-clients.test.ts',
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
      { extends: true, test: { name: 'shared', include: ['src/**/*.test.ts', ...SHARED_SUITES], exclude: ISOLATED_SOURCES, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts', ...ISOLATED_SOURCES], exclude: SHARED_SUITES } },
    ],
  },
});
