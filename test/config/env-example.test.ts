import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMPOSE_VARIABLES, envExampleUrl, renderEnvExample } from '../../bin/env-example.js';
import { loadConfig, SETTING_NAMES } from '../../src/config.js';

describe('.env.example', () => {
  const committed = readFileSync(envExampleUrl, 'utf8');

  it('is what `npm run env-example` writes from src/config.ts', () => {
    expect(committed).toBe(renderEnvExample());
  });

  it('names every setting once, each with a line of meaning above it', () => {
    const lines = committed.split('\n');
    const named = lines.flatMap((line) => /^#([A-Z][A-Z0-9_]+)=/.exec(line)?.[1] ?? []);
    expect(named).toEqual([...SETTING_NAMES, ...Object.keys(COMPOSE_VARIABLES)]);
    for (const name of named) {
      const at = lines.findIndex((line) => line.startsWith(`#${name}=`));
      expect(lines[at - 1], name).toMatch(/^# \S.{10,}/);
    }
  });

  it('gives defaults the service accepts: uncommented as written, they load as the defaults do', () => {
    const env: Record<string, string> = {};
    for (const line of committed.split('\n')) {
      const m = /^#([A-Z][A-Z0-9_]+)=(.+)$/.exec(line);
      if (m) env[m[1]!] = m[2]!;
    }
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});
