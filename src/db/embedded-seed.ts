import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrationsFolder } from './migrate.js';

/**
 * A copy of a new embedded database, kept per machine, that the next new one starts from.
 *
 * A new embedded database costs PGlite's initdb (PostgreSQL's, run in WebAssembly: 3–4 s of a
 * quiet core, over 15 s on a loaded 2-core machine) and the migrations; loading a tarball of a
 * database made the same way costs a quarter of that. So the first new database on a machine is
 * made in memory (initdb and migrations), its tarball kept in the user's cache folder and loaded
 * into the new folder; every later one (a second DATA_DIR, a `memory:` trial, `felis` commands on
 * a new folder, the tests' service processes) is loaded from the kept copy (src/db/embedded.ts).
 *
 * A copy is used only when it was made by the same PGlite release from the same migrations (both
 * are in its name's key) and its bytes are the ones written (their SHA-256 is in its name too);
 * otherwise the database is made by initdb as if there were no copy. The cache is best effort: a
 * folder that cannot be written or read only costs the initdb. The copies share PostgreSQL's
 * system identifier, which matters only to physical replication, which the embedded database
 * never does.
 */

const PREFIX = 'embedded-seed-';
/** Copies kept for other builds (checkouts, releases) besides this one's. */
const KEPT_BUILDS = 4;

/** `$XDG_CACHE_HOME/felis`, or `~/.cache/felis`. */
function cacheFolder(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'felis');
}

let inputsKey: string | undefined;

/** What a seed depends on: the PGlite release and every migration file, by content. */
function keyOfInputs(): string {
  if (inputsKey) return inputsKey;
  const hash = createHash('sha256');
  // The seed's own format: a database made in memory (no file but PostgreSQL's).
  hash.update(`seed 2\npglite ${pgliteVersion()}\n`);
  const files = [join('meta', '_journal.json'), ...readdirSync(migrationsFolder).filter((f) => f.endsWith('.sql')).sort()];
  for (const file of files) hash.update(`${file}\n`).update(readFileSync(join(migrationsFolder, file)));
  inputsKey = hash.digest('hex').slice(0, 16);
  return inputsKey;
}

/** The installed PGlite's version (its package.json, found from its entry point: it exports no such subpath). */
function pgliteVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (name === '@electric-sql/pglite' && version) return version;
    }
    if (dirname(dir) === dir) throw new Error('the installed PGlite has no package.json');
    dir = dirname(dir);
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The kept copy for this build's PGlite and migrations, checked byte for byte; undefined when none. */
export function findSeed(): Uint8Array<ArrayBuffer> | undefined {
  try {
    const folder = cacheFolder();
    const prefix = `${PREFIX}${keyOfInputs()}-`;
    for (const name of readdirSync(folder)) {
      if (!name.startsWith(prefix) || !name.endsWith('.tar.gz')) continue;
      const bytes = readFileSync(join(folder, name));
      if (sha256(bytes) === name.slice(prefix.length, -'.tar.gz'.length)) return bytes;
      rmSync(join(folder, name), { force: true }); // damaged: made again by the next initdb
    }
  } catch {
    // No cache folder, or one this user cannot read: the initdb it is.
  }
  return undefined;
}

/** Keeps the tarball of a database just made by initdb and migrated. */
export function keepSeed(bytes: Uint8Array<ArrayBuffer>): void {
  try {
    const folder = cacheFolder();
    mkdirSync(folder, { recursive: true });
    const name = `${PREFIX}${keyOfInputs()}-${sha256(bytes)}.tar.gz`;
    const partial = join(folder, `.${name}.${process.pid}`);
    writeFileSync(partial, bytes);
    renameSync(partial, join(folder, name));
    // Other builds' copies (another checkout, an older release) stay, the newest few of them.
    const kept = readdirSync(folder)
      .filter((other) => other.startsWith(PREFIX))
      .map((other) => ({ other, at: statSync(join(folder, other)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const { other } of kept.slice(KEPT_BUILDS)) rmSync(join(folder, other), { force: true });
  } catch {
    // A cache that cannot be written costs the next new database its initdb, nothing else.
  }
}
