#!/usr/bin/env node
// The `felis` command (package.json "bin"): runs the compiled dist/cli/felis.js when it is up to
// date (the image; a clone after `npm start` or `npm run build`), else the sources through tsx.
import { fileURLToPath } from 'node:url';
import { staleBuild } from './stale.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
if (!staleBuild(root, 'dist/cli/felis.js')) {
  await import(new URL('../dist/cli/felis.js', import.meta.url).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/felis.ts', import.meta.url).href);
}
