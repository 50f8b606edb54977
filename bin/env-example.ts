/**
 * Writes `.env.example`: every setting the service reads, with its default and one line of meaning,
 * from `SETTING_MEANINGS` and the schema in src/config.ts. test/config/env-example.test.ts fails when
 * the committed file and the configuration part.
 *
 *   npm run env-example
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SETTING_MEANINGS, SETTING_NAMES, settingDefault } from '../src/config.js';
import { SERVICE_VERSION } from '../src/version.js';

export const envExampleUrl = new URL('../.env.example', import.meta.url);

/** Variables that only compose.yaml reads (the database's and the S3 store's containers, image tags). */
export const COMPOSE_VARIABLES = {
  POSTGRES_PASSWORD: { meaning: "compose.yaml: required, the password of PostgreSQL's felis user (openssl rand -hex 24)", fallback: '' },
  S3_ACCESS_KEY: { meaning: 'compose.yaml, profile s3: required there, the access key of the S3 store (also given to Felis)', fallback: '' },
  S3_SECRET_KEY: { meaning: 'compose.yaml, profile s3: required there, the secret key of the S3 store', fallback: '' },
  FELIS_VERSION: { meaning: 'compose.yaml: the tag of the Felis image built or pulled', fallback: SERVICE_VERSION },
  SEAWEEDFS_VERSION: { meaning: 'compose.yaml, profile s3: the tag of the SeaweedFS image (pin a release in production)', fallback: 'latest' },
} as const;

/** The file's text: a commented line of meaning, then the setting commented out at its default. */
export function renderEnvExample(): string {
  const lines = [
    '# Felis control plane: every setting, with its default and what it means.',
    '# Copy to .env (compose.yaml reads it) or export the ones you change; a line left commented',
    '# keeps the default. Written by `npm run env-example` from src/config.ts: do not edit by hand.',
    '',
  ];
  for (const name of SETTING_NAMES) {
    const fallback = settingDefault(name);
    lines.push(`# ${SETTING_MEANINGS[name]}`, `#${name}=${fallback === undefined ? '' : fallback}`, '');
  }
  lines.push('# ---- Read by compose.yaml only (not by the service) ----', '');
  for (const [name, { meaning, fallback }] of Object.entries(COMPOSE_VARIABLES)) {
    lines.push(`# ${meaning}`, `#${name}=${fallback}`, '');
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(envExampleUrl, renderEnvExample());
  console.log(`wrote ${fileURLToPath(envExampleUrl)}`);
}
