import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import * as tar from 'tar';

/** A world's tar.gz as a stream, and how many entries it had to leave out. */
export interface WorldArchive {
  stream: Readable;
  /** Final once the stream has ended. */
  skipped(): number;
}

/** Regular files and folders go in; links, devices, sockets and FIFOs cannot be archived safely. */
const archivable = (stat: Stats) => stat.isFile() || stat.isDirectory();

/**
 * Streams a tar.gz of `dir` (paths relative to it, owners and modes made portable). Nothing is
 * buffered beyond the streams' own water marks, so a world of any size passes in flat memory.
 */
export function archiveWorld(dir: string): WorldArchive {
  let skipped = 0;
  const packer = tar.create(
    {
      cwd: dir,
      portable: true,
      follow: false,
      filter: (_path, stat) => {
        if (archivable(stat as Stats)) return true;
        skipped += 1;
        return false;
      },
    },
    ['.'],
  );
  const stream = new PassThrough({ highWaterMark: 1 << 20 });
  // Compressed on the thread pool (node:zlib) while the main thread reads and packs. Level 1:
  // region files are zlib-compressed already, so a higher level costs CPU for little.
  pipeline(packer as unknown as Readable, createGzip({ level: 1, chunkSize: 1 << 20 }), stream).catch((err: unknown) => stream.destroy(err as Error));
  return { stream, skipped: () => skipped };
}

/** A pass-through that hashes what flows through it (sha-256, lowercase hex once ended). */
export function hashing(): Transform & { digest(): string; bytes(): number } {
  const hash = createHash('sha256');
  let bytes = 0;
  let hex: string | undefined;
  const transform = new Transform({
    highWaterMark: 1 << 20,
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return Object.assign(transform, {
    digest: () => (hex ??= hash.digest('hex')),
    bytes: () => bytes,
  });
}

/** The sha-256 of a stream's bytes, read to its end. */
export async function hashStream(source: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * Unpacks a world archive into `dir` (an empty staging folder) and hashes the archive's bytes as
 * they pass. Only files and folders are written: an archive that names a link, a device or a path
 * out of `dir` writes nothing of it (the store is trusted no further than a client is).
 */
export async function unpackWorld(source: Readable, dir: string, signal?: AbortSignal): Promise<{ sha256: string; bytes: number }> {
  const hasher = hashing();
  const unpack = tar.extract({
    cwd: dir,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    filter: (_path, entry) => {
      const type = (entry as tar.ReadEntry).type;
      return type === 'File' || type === 'OldFile' || type === 'ContiguousFile' || type === 'Directory';
    },
  });
  // Inflated on the thread pool (node:zlib), beside the main thread that parses and writes.
  await pipeline(source, hasher, createGunzip({ chunkSize: 1 << 20 }), unpack as unknown as NodeJS.WritableStream, { signal });
  return { sha256: hasher.digest(), bytes: hasher.bytes() };
}
