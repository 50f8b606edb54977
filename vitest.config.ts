import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Each worker imports the app's module graph once instead of once per file: the graph is
    // about 1 s of the 2-core machine's time per file (113 files). Tests share no module state:
    // every dependency reaches a test through its own deps (DESIGN.md), and no file mocks a module.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    teardownTimeout: 10_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
