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

export const envExampleUrl = new URL('../.env.example', import.meta.url);

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
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(envExampleUrl, renderEnvExample());
  console.log(`wrote ${fileURLToPath(envExampleUrl)}`);
}
