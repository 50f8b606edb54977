import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { runKilledScheduledBackup } from '../helpers/failover.js';
import { builtImage } from '../helpers/process.js';
import { useTempDir } from '../helpers/worlds.js';

/**
 * Issue 43 item 6, with a real SIGKILL: the built service (the image's dist/main.js) is killed while
 * a scheduled backup holds the world, and started again on the same PostgreSQL database. Nothing
 * of the dead life (its world lock, its backup job, its schedule run) may outlive it by more than
 * the heartbeat watch needs to judge it dead. PostgreSQL only: on the embedded database the next
 * start releases every lease of a previous life at once (test/server/previous-life.test.ts).
 */
const postgres = Boolean(process.env.TEST_DATABASE_URL);
if (!postgres) process.stdout.write('killed-run test skipped: needs PostgreSQL (TEST_DATABASE_URL)\n');

describe.skipIf(!postgres)('a service killed during a scheduled backup, started again (issue 43 item 6)', () => {
  const tempDir = useTempDir('felis-killed-run-');

  it('frees the world, fails the job and ends the run within the heartbeat watch, not the lock lease', { timeout: 240_000 }, async () => {
    const image = await builtImage();
    const figures = await runKilledScheduledBackup({
      command: process.execPath,
      args: [join(image, 'dist/main.js')],
      databaseUrl: (await createPostgresTestDatabase())!,
      dataDir: tempDir(),
      step: (what) => process.stdout.write(`killed run: ${what}\n`),
    });
    process.stdout.write(`killed run: ${JSON.stringify(figures)}\n`);
    expect(figures.wrong).toEqual([]);
    for (const seconds of [figures.lockGoneSeconds, figures.jobFailedSeconds, figures.writeSeconds, figures.runEndedSeconds]) {
      expect(seconds).not.toBeNull();
      // The heartbeat TTL and a few of its beats, never the lock's (or a round's) 60 s lease.
      expect(seconds!).toBeLessThan(figures.lockLeaseSeconds / 2);
    }
    expect(figures.runResult).toBe('failed');
  });
});
