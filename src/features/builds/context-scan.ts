import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Parser, type ReadEntry } from 'tar';

/** What the stand-in learns from a context tarball: its digest, its files, and what they hold. */
export interface ContextContents {
  sha256: string;
  files: Array<{ path: string; size: number }>;
  /** Text of small files, for the secret rules (larger files are not read). */
  texts: Map<string, string>;
}

const TEXT_READ_LIMIT = 256 * 1024;
const ENTRY_LIMIT = 100_000;

/** Reads a gzip tarball as a stream (memory stays bounded by TEXT_READ_LIMIT per file). */
export async function readContext(stream: Readable): Promise<ContextContents> {
  const hash = createHash('sha256');
  const files: ContextContents['files'] = [];
  const texts = new Map<string, string>();
  const parser = new Parser({
    onReadEntry: (entry: ReadEntry) => {
      if (entry.type !== 'File' || files.length >= ENTRY_LIMIT) {
        entry.resume();
        return;
      }
      const path = entry.path.replace(/^\.\//, '');
      files.push({ path, size: entry.size });
      if (entry.size > TEXT_READ_LIMIT) {
        entry.resume();
        return;
      }
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => texts.set(path, Buffer.concat(chunks).toString('utf8')));
    },
  });
  const done = new Promise<void>((resolve, reject) => {
    parser.on('end', () => resolve());
    parser.on('error', reject);
  });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    if (!parser.write(chunk)) await new Promise<void>((resolve) => parser.once('drain', () => resolve()));
  }
  parser.end();
  await done;
  return { sha256: hash.digest('hex'), files, texts };
}
