import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');

/** Every module a source file imports (static imports and re-exports), as written. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'/gm)].map((match) => match[1]!);
}

describe('folder direction (DESIGN.md: dependencies flow one way)', () => {
  it('src/http/ imports neither the runtime, a feature, the app, nor the whole deps', () => {
    const dir = join(src, 'http');
    const offending: string[] = [];
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      for (const target of importsOf(join(dir, name))) {
        if (/^\.\.\/(runtime|features|app|adapters)\/|^\.\.\/deps\.js$|^\.\.\/wiring\.js$/.test(target)) offending.push(`${name} → ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
