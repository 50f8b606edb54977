/**
 * Checks the service's own dependencies (against the npm registry, NPM_REGISTRY_URL) and its image
 * (FELIS_IMAGE against REGISTRY_URL) for newer versions and records the report for
 * GET /api/v1/updates/report. A feed that cannot be read gives its components the state `unknown`.
 *
 *   felis check-updates        (npm run check-updates)
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/client.js';
import { recordUpdateReport, checkDependencies, checkOwnImage } from '../../features/operations/index.js';
import { systemClock } from '../../lib/clock.js';
import { SERVICE_VERSION } from '../../version.js';
import { createRegistry } from '../../service.js';
import { UsageError, type Command } from '../command.js';

async function run(args: string[]): Promise<number> {
  if (args.length > 0) throw new UsageError('felis check-updates takes no arguments');
  const config = loadConfig();
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const components = [
    { name: 'felis', state: 'current' as const, current: SERVICE_VERSION },
    await checkOwnImage(createRegistry(config), process.env.FELIS_IMAGE),
    ...(await checkDependencies({ root, registryUrl: process.env.NPM_REGISTRY_URL ?? 'https://registry.npmjs.org' })),
  ];
  const report = { checked_at: systemClock.now().toISOString(), felis: SERVICE_VERSION, components };
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, migrate: false });
  try {
    await recordUpdateReport(database.db, report, systemClock.now());
  } finally {
    await database.close();
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return 0;
}

export const checkUpdates: Command = {
  verb: 'check-updates',
  summary: "compare the service's dependencies and image with their registries and record the report",
  usage: 'felis check-updates\n\nReads FELIS_IMAGE and NPM_REGISTRY_URL; the report is served at GET /api/v1/updates/report.',
  run,
};
