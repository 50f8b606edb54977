import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ServerSpec } from './types.js';

/**
 * The file that keeps a cluster's server specs across restarts where the cluster has no store of
 * its own (the simulated and local clusters): `{servers: [spec…]}`.
 */
export function readSpecs(file: string): ServerSpec[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const kept = JSON.parse(text) as { servers?: ServerSpec[] };
  return Array.isArray(kept.servers) ? kept.servers : [];
}

/** Writes every spec (a whole new file renamed into place, so a crash leaves the old or the new one). */
export function writeSpecs(file: string, specs: ServerSpec[]): void {
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  writeFileSync(partial, JSON.stringify({ servers: specs }));
  renameSync(partial, file);
}
