/**
 * Dumps the control-plane database (DATABASE_URL, or the embedded one in DATA_DIR) into a bundle in
 * DB_BACKUP_DIR, records it for GET /api/v1/platform/db-backup, and keeps the newest DB_BACKUP_KEEP
 * bundles of its label. PostgreSQL is dumped with pg_dump while the service runs; the embedded
 * database only while the service is stopped (one process at a time may open it).
 *
 *   npm run db:backup [-- --label daily|manual]
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { backupDatabase } from '../features/operations/index.js';
import { systemClock } from '../lib/clock.js';
import { runCommand } from './run-command.js';

runCommand(async () => {
  const { values } = parseArgs({ options: { label: { type: 'string', default: 'daily' } } });
  if (values.label !== 'daily' && values.label !== 'manual') throw new Error('--label must be daily or manual');
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, migrate: false });
  try {
    const record = await backupDatabase({ database, config, clock: systemClock }, values.label);
    process.stdout.write(`${JSON.stringify(record)}\n`);
    return 0;
  } finally {
    await database.close();
  }
});
