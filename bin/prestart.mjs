// `npm start`'s first step: compiles src/ into dist/ when dist/ is missing or older than a source,
// and says so, since that takes a minute or more on a small machine (later starts skip it).
// Plain JavaScript on purpose: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { staleBuild } from './stale.mjs';

const stale = staleBuild('.', 'dist/main.js');
if (stale) {
  const started = Date.now();
  console.error(`felis: compiling src/ into dist/ (${stale}); this takes about a minute on 2 cores, once`);
  const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  if (tsc.status !== 0) {
    console.error('felis: the compilation failed (above); dist/ was not updated');
    process.exit(tsc.status ?? 1);
  }
  console.error(`felis: compiled in ${Math.round((Date.now() - started) / 1000)} s; starting`);
}
