/**
 * Restores a bundle written by db:backup over the configured database, after taking a pre-restore
 * bundle of what is there now. Refuses a bundle of the other database kind or of a newer schema.
 * Stop the service first (scale the Deployment to 0).
 *
 *   npm run db:restore -- <bundle.tar.gz>
 */
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { restoreFromBundle } from '../features/operations/index.js';
import { systemClock } from '../lib/clock.js';
import { runCommand } from './run-command.js';

runCommand(async () => {
  const file = process.argv[2];
  if (!file) throw new Error('usage: db-restore <bundle.tar.gz>');
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, migrate: false });
  try {
    const { restored, safety } = await restoreFromBundle({ database, config, clock: systemClock }, file);
    process.stdout.write(
      `Restored ${file} (${restored.label}, ${restored.created_at}, schema ${restored.schema_version}).\n` +
        `What was there before is in ${safety.dir}/${safety.name}.\n`,
    );
    return 0;
  } finally {
    await database.close();
  }
});
