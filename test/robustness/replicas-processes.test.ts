import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver, type S3rverProcess } from '../../src/adapters/backup-store/s3rver-process.js';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { runContextAcrossReplicas } from '../helpers/failover.js';
import { builtImage } from '../helpers/process.js';
import { useTempDir } from '../helpers/worlds.js';

/**
 * Issue 43 item 13 on two built service processes: one PostgreSQL database, one S3 server process,
 * a DATA_DIR each. PostgreSQL only (two processes cannot share an embedded database).
 */
const postgres = Boolean(process.env.TEST_DATABASE_URL);
if (!postgres) process.stdout.write('replica process tests skipped: needs PostgreSQL (TEST_DATABASE_URL)\n');

describe.skipIf(!postgres)('two service processes on one database and one bucket (issue 43 item 13)', () => {
  const tempDir = useTempDir('felis-two-processes-');
  let s3: S3rverProcess;
  beforeAll(async () => {
    s3 = await startS3rver(tempDir());
  });
  afterAll(async () => {
    await s3?.stop();
  });

  it('a submission context: part 1 on A, part 2 on B, part 3 on A, completed on A, stored whole', { timeout: 180_000 }, async () => {
    const image = await builtImage();
    const outcome = await runContextAcrossReplicas({
      command: process.execPath,
      args: [join(image, 'dist/main.js')],
      databaseUrl: (await createPostgresTestDatabase())!,
      s3: { endpoint: s3.endpoint, bucket: s3.bucket },
      dataDirs: [tempDir(), tempDir()],
    });
    process.stdout.write(`context across replicas: ${JSON.stringify(outcome)}\n`);
    expect(outcome.statuses).toEqual(['create A 201', 'part at 0 on A 200', 'part at 262144 on B 200', 'part at 524288 on A 200', 'complete on A 200']);
    expect(outcome.stored).toBe(outcome.sent);
  });
});
