import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** The pages a reader follows today: the README and docs/ (the issue notes in docs/notes/ are history). */
const PAGES = ['README.md', 'CHANGELOG.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Folders of this repository that a page may name a path under. */
const TOP = /^(src|test|bench|bin|docs|deploy|drizzle|tools)\//;

describe('the pages', () => {
  it.each(PAGES)('%s links only to files that exist', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:|#)/.test(target!)) continue;
      const path = target!.replace(/#.*$/, '');
      if (!existsSync(resolve(root, dirname(page), path))) broken.push(target!);
    }
    expect(broken).toEqual([]);
  });

  it.each(PAGES)('%s names only repository paths that exist', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const missing = new Set<string>();
    for (const [, quoted] of text.matchAll(/`([^`\s]+)`/g)) {
      // A path with a placeholder or a pattern (`DATA_DIR/…`, `<name>`, `*`) is not one file.
      const path = quoted!.replace(/:\d+(-\d+)?$/, '').replace(/[),.;]+$/, '');
      if (!TOP.test(path) || /[<>*…{}$]|\.\.\./.test(path)) continue;
      if (!existsSync(join(root, path))) missing.add(path);
    }
    expect([...missing]).toEqual([]);
  });
});
