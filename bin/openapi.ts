/**
 * Writes the OpenAPI 3.1 documents of both faces into docs/api/, exactly as a running service
 * serves them on its internal face (`/openapi/internal.json`, `/openapi/external.json`).
 * test/http/openapi-documents.test.ts fails when the routes change and these files do not.
 *
 *   npm run openapi
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createApps } from '../src/app/index.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { createLogger } from '../src/lib/logger.js';
import { assembleDeps } from '../src/service.js';

export const FACES = ['internal', 'external'] as const;

/** Where a face's document lives in the repository. */
export const documentUrl = (face: (typeof FACES)[number]) => new URL(`../docs/api/openapi-${face}.json`, import.meta.url);

/** The committed form: two-space JSON and a final newline, so that a diff reads line by line. */
export const formatDocument = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

async function main(): Promise<void> {
  // The documents do not depend on the configuration; a throw-away database is enough to build the apps.
  const config = loadConfig({ DATABASE_URL: 'memory:', LOG_LEVEL: 'silent', MAIL_TRANSPORT: 'none' } as NodeJS.ProcessEnv);
  const log = createLogger('silent');
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, migrate: false });
  try {
    const { internal } = createApps(assembleDeps({ config, log, database }));
    mkdirSync(new URL('../docs/api/', import.meta.url), { recursive: true });
    for (const face of FACES) {
      const res = await internal.request(`/openapi/${face}.json`);
      if (res.status !== 200) throw new Error(`/openapi/${face}.json answered ${res.status}`);
      writeFileSync(documentUrl(face), formatDocument(await res.json()));
      process.stdout.write(`wrote ${fileURLToPath(documentUrl(face))}\n`);
    }
  } finally {
    await database.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`openapi: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
