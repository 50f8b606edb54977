import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../../src/config.js';

/** Variables that only the operations commands read (src/cli/check-updates.ts), not the service. */
const COMMAND_ONLY = ['FELIS_IMAGE', 'NPM_REGISTRY_URL'];

/**
 * The variables named in the first column of the configuration table (docs/configuration.md). A cell may list
 * several (`SMTP_URL`, `MAIL_FROM`) and shorten a family: `SERVICE_TOKEN_PROXY`, `…_LIMBO` is
 * SERVICE_TOKEN_PROXY and SERVICE_TOKEN_LIMBO; `…_FILE` variants are a rule of the family, not settings.
 */
function tableVariables(page: string): string[] {
  const table = page.slice(page.indexOf('\n| variable |'));
  const names: string[] = [];
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cell = line.split('|')[1]!;
    let family = '';
    for (const [, name] of cell.matchAll(/`([^`]+)`/g)) {
      for (const part of name!.split(' / ').map((n) => n.trim())) {
        if (part.startsWith('…_')) {
          if (part !== '…_FILE') names.push(`${family}${part.slice(2)}`);
        } else {
          names.push(part);
          family = part.slice(0, part.lastIndexOf('_') + 1);
        }
      }
    }
  }
  return names;
}

describe('the configuration table', () => {
  const listed = tableVariables(readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8'));

  it('lists every setting the service reads, once', () => {
    expect(SETTING_NAMES.length).toBeGreaterThan(40);
    expect(SETTING_NAMES.filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([]);
  });

  it('lists nothing the service does not read', () => {
    expect(listed.filter((name) => !SETTING_NAMES.includes(name as never) && !COMMAND_ONLY.includes(name))).toEqual([]);
  });
});
