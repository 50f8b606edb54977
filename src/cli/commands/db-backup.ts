/**
 * Dumps the control-plane database (DATABASE_URL, or the embedded one in DATA_DIR) into a bundle in
 * DB_BACKUP_DIR, records it for GET /api/v1/platform/db-backup, and keeps the newest DB_BACKUP_KEEP
 * bundles of its label. PostgreSQL is dumped with pg_dump while the service runs; the embedded
 * database only while the service is stopped (one process at a time may open it).
 *
 *   felis db backup [--label daily|manual]        (npm run db:backup [-- --label …])
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/client.js';
import { backupDatabase } from '../../features/operations/index.js';
import { systemClock } from '../../lib/clock.js';
import { UsageError, type Command } from '../command.js';

async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { label: { type: 'string', default: 'daily' } } });
  if (values.label !== 'daily' && values.label !== 'manual') throw new UsageError('--label must be daily or manual');
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, migrate: false });
  try {
    const record = await backupDatabase({ database, config, clock: systemClock }, values.label);
    process.stdout.write(`${JSON.stringify(record)}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

export const dbBackup: Command = {
  verb: 'db backup',
  summary: 'dump the control-plane database into a bundle in DB_BACKUP_DIR',
  usage: 'felis db backup [--label daily|manual]\n\nPostgreSQL: while the service runs (pg_dump). The embedded database: with the service stopped.',
  run,
};
