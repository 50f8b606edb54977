/**
 * Restores a bundle written by db:backup over the configured database, after taking a pre-restore
 * bundle of what is there now. Refuses a bundle of the other database kind or of a newer schema.
 * Stop the service first (scale the Deployment to 0).
 *
 *   felis db restore <bundle.tar.gz>        (npm run db:restore -- <bundle.tar.gz>)
 */
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/client.js';
import { restoreFromBundle } from '../../features/operations/index.js';
import { systemClock } from '../../lib/clock.js';
import { UsageError, type Command } from '../command.js';

async function run(args: string[]): Promise<number> {
  const [file, ...rest] = args;
  if (!file || rest.length > 0) throw new UsageError('usage: felis db restore <bundle.tar.gz>');
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
}

export const dbRestore: Command = {
  verb: 'db restore',
  summary: 'restore a database bundle over the configured database (service stopped)',
  usage: 'felis db restore BUNDLE.tar.gz\n\nTakes a pre-restore bundle of what is there first; refuses a bundle of the other database kind or a newer schema.',
  run,
};
