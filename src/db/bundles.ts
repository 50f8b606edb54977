import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { DUMP_FILE, dumpDatabase, type DumpSource } from './dump.js';

export type BundleLabel = 'daily' | 'pre-migrate' | 'pre-restore' | 'manual';

/** What a bundle says of itself (`manifest.json` beside the dump). */
export interface BundleManifest {
  format: 1;
  kind: DumpSource['kind'];
  label: BundleLabel;
  created_at: string;
  felis_version: string;
  schema_version: number;
  dump_file: string;
}

/** A bundle as the database backup status records it (contract: DBBackupStatus `last`). */
export interface BundleRecord {
  at: string;
  name: string;
  label: BundleLabel;
  size_bytes: number;
  dir: string;
  felis_version: string;
  schema_version: number;
}

const BUNDLE_NAME = /^felis-db-(\d{8}T\d{9}Z)-(daily|pre-migrate|pre-restore|manual)\.tar\.gz$/;

/** `felis-db-20260601T120000123Z-daily.tar.gz`: names sort in time order within a label. */
export function bundleName(at: Date, label: BundleLabel): string {
  const stamp = at.toISOString().replaceAll(/[-:]/g, '').replace('.', '');
  return `felis-db-${stamp}-${label}.tar.gz`;
}

/**
 * Dumps the database into `dir` as one .tar.gz bundle (manifest and dump). The bundle appears under
 * its final name only once complete, so a crash never leaves a bundle that looks whole.
 */
export async function writeBundle(options: {
  source: DumpSource;
  dir: string;
  label: BundleLabel;
  at: Date;
  felisVersion: string;
  schemaVersion: number;
}): Promise<BundleRecord> {
  const { source, dir, label, at } = options;
  await mkdir(dir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'felis-bundle-'));
  try {
    const dumpFile = DUMP_FILE[source.kind];
    await dumpDatabase(source, join(work, dumpFile));
    const manifest: BundleManifest = {
      format: 1,
      kind: source.kind,
      label,
      created_at: at.toISOString(),
      felis_version: options.felisVersion,
      schema_version: options.schemaVersion,
      dump_file: dumpFile,
    };
    await writeFile(join(work, 'manifest.json'), JSON.stringify(manifest, null, 2));
    const name = bundleName(at, label);
    const partial = join(dir, `.${name}.partial`);
    await tar.c({ gzip: true, cwd: work, file: partial, portable: true }, ['manifest.json', dumpFile]);
    await rename(partial, join(dir, name));
    const { size } = await stat(join(dir, name));
    return { at: manifest.created_at, name, label, size_bytes: size, dir, felis_version: options.felisVersion, schema_version: options.schemaVersion };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Unpacks a bundle into a new temporary folder; the caller removes `folder` when done. */
export async function openBundle(file: string): Promise<{ manifest: BundleManifest; dumpPath: string; folder: string }> {
  const folder = await mkdtemp(join(tmpdir(), 'felis-restore-'));
  try {
    await tar.x({ file, cwd: folder, strict: true, filter: (path) => path === 'manifest.json' || Object.values(DUMP_FILE).includes(path as never) });
    const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as BundleManifest;
    if (manifest.format !== 1 || !Object.values(DUMP_FILE).includes(manifest.dump_file as never)) {
      throw new Error(`${file} is not a Felis database bundle of a format this build reads`);
    }
    return { manifest, dumpPath: join(folder, manifest.dump_file), folder };
  } catch (err) {
    await rm(folder, { recursive: true, force: true });
    throw err;
  }
}

/** Removes the oldest bundles of `label` beyond the newest `keep`; returns the names removed. */
export async function pruneBundles(dir: string, label: BundleLabel, keep: number): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => BUNDLE_NAME.exec(n)?.[2] === label).sort();
  const removed = names.slice(0, Math.max(0, names.length - keep));
  for (const name of removed) await rm(join(dir, name), { force: true });
  return removed;
}
