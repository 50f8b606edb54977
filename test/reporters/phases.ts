import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Writes each test file's phases (what vitest's summary adds up for the run) as JSON, slowest file
 * first, to rank where a run's time goes:
 *   npx vitest run --reporter=default --reporter=./test/reporters/phases.ts
 * The file is PHASES_OUT, by default vitest-phases.json in the working folder (git ignores it).
 */
export default class PhasesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules.map((m) => {
      const d = m.diagnostic();
      const total = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
      return {
        file: relative(process.cwd(), m.moduleId),
        state: m.state(),
        total: Math.round(total),
        prepare: Math.round(d.prepareDuration),
        environment: Math.round(d.environmentSetupDuration),
        // Importing the file (and everything it imports) and running its describe blocks.
        collect: Math.round(d.collectDuration),
        setup: Math.round(d.setupDuration),
        // Tests and hooks.
        tests: Math.round(d.duration),
      };
    });
    rows.sort((a, b) => b.total - a.total);
    writeFileSync(process.env.PHASES_OUT ?? 'vitest-phases.json', `${JSON.stringify(rows, null, 1)}\n`);
  }
}
