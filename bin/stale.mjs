// Whether dist/ is missing or older than a source under src/ (bin/prestart.mjs, bin/felis.mjs).
// Plain JavaScript on purpose: it runs before anything is compiled.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time of a non-test TypeScript source under `dir`. */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Why `built` (under `root`) must be compiled again, or undefined when it is up to date. */
export function staleBuild(root, built) {
  const file = join(root, built);
  if (!existsSync(file)) return 'no compiled service yet';
  const src = join(root, 'src');
  if (existsSync(src) && newestSource(src) > statSync(file).mtimeMs) return 'sources changed since the last build';
  return undefined;
}
