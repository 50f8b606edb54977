import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BackupNotFoundError, BackupStoreFullError, type BackupStore } from '../../../adapters/backup-store/types.js';
import { isErrno } from '../../../lib/errno.js';

/** Why staging a part stopped; the caller turns each into its answer. */
export class StagePartError extends Error {
  constructor(
    readonly reason: 'too_large' | 'store_full',
    message: string,
  ) {
    super(message);
    this.name = 'StagePartError';
  }
}

export interface StagePartOptions {
  /** Where the part starts: the bytes already staged; anything beyond is dropped first. */
  offset: number;
  /** Most bytes this part may carry. */
  maxBytes: number;
}

/**
 * Where submission contexts live: a staging area that grows part by part, and the stored tarball.
 * Keys are submission ids; a storage path never leaves this module.
 */
export interface ContextStore {
  /**
   * Writes one part at `offset`, streaming (memory stays flat whatever the size). On any failure,
   * the body's own included (a digest that did not match), the staged bytes are put back to
   * `offset`. Resolves with the staged length.
   */
  stagePart(id: string, body: AsyncIterable<Uint8Array>, options: StagePartOptions): Promise<number>;
  /** Bytes staged so far (0 when nothing is). */
  stagedBytes(id: string): Promise<number>;
  /** Moves the staged bytes to the stored context; resolves with their sha-256 (hex) and size. */
  commit(id: string): Promise<{ sha256: string; size: number }>;
  /** The stored context, or undefined. */
  open(id: string): Promise<Readable | undefined>;
  /** Removes the staged and stored bytes of a submission. */
  remove(id: string): Promise<void>;
}

const SAFE_ID = /^[0-9a-f-]{36}$/;

/** A directory on a volume (shared between replicas in a multi-replica deployment). */
export class DirectoryContextStore implements ContextStore {
  constructor(
    readonly directory: string,
    /** Free bytes the volume must keep after a part; below it a part is refused as full. */
    readonly reserveBytes = 64 * 1024 * 1024,
  ) {}

  #path(id: string, kind: 'staged' | 'stored'): string {
    if (!SAFE_ID.test(id)) throw new Error(`not a submission id: ${id}`);
    return join(this.directory, `${id}.${kind === 'staged' ? 'upload' : 'tar.gz'}`);
  }

  async stagePart(id: string, body: AsyncIterable<Uint8Array>, options: StagePartOptions): Promise<number> {
    await mkdir(this.directory, { recursive: true });
    const fs = await statfs(this.directory);
    if (fs.bavail * fs.bsize < this.reserveBytes + Math.min(options.maxBytes, 1)) {
      throw new StagePartError('store_full', 'The uploads store is full.');
    }
    const file = await open(this.#path(id, 'staged'), 'a+');
    let position = options.offset;
    try {
      await file.truncate(options.offset);
      for await (const chunk of body) {
        if (position - options.offset + chunk.byteLength > options.maxBytes) {
          throw new StagePartError('too_large', `A part carries at most ${options.maxBytes} bytes.`);
        }
        let written = 0;
        while (written < chunk.byteLength) {
          const { bytesWritten } = await file.write(chunk, written, chunk.byteLength - written, position + written);
          written += bytesWritten;
        }
        position += chunk.byteLength;
      }
      await file.sync();
      return position;
    } catch (err) {
      await file.truncate(options.offset).catch(() => undefined);
      if (isErrno(err, 'ENOSPC')) throw new StagePartError('store_full', 'The uploads store is full.');
      throw err;
    } finally {
      await file.close();
    }
  }

  async stagedBytes(id: string): Promise<number> {
    try {
      return (await stat(this.#path(id, 'staged'))).size;
    } catch {
      return 0;
    }
  }

  async commit(id: string): Promise<{ sha256: string; size: number }> {
    const staged = this.#path(id, 'staged');
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of createReadStream(staged) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.byteLength;
    }
    await rename(staged, this.#path(id, 'stored'));
    return { sha256: hash.digest('hex'), size };
  }

  async open(id: string): Promise<Readable | undefined> {
    const path = this.#path(id, 'stored');
    try {
      await stat(path);
    } catch {
      return undefined;
    }
    return createReadStream(path);
  }

  async remove(id: string): Promise<void> {
    await rm(this.#path(id, 'staged'), { force: true });
    await rm(this.#path(id, 'stored'), { force: true });
  }
}

/** A part's key: its offset in fixed width, so that key order is byte order. */
const partKey = (id: string, offset: number) => `contexts/${id}/${String(offset).padStart(15, '0')}`;
const partOffset = (key: string) => Number(key.slice(key.lastIndexOf('/') + 1));

/**
 * Contexts in a shared object store (the bucket when one is configured): each part is an object of
 * its own, streamed in (multipart past one S3 part, never held whole), so a part sent to any
 * replica lands where every replica reads it; the commit streams the parts in order into the
 * stored context, hashing on the way, and removes them.
 */
export class ObjectContextStore implements ContextStore {
  constructor(readonly store: BackupStore) {}

  #parts(id: string) {
    if (!SAFE_ID.test(id)) throw new Error(`not a submission id: ${id}`);
    return this.store.list(`contexts/${id}/`);
  }

  #stored(id: string): string {
    if (!SAFE_ID.test(id)) throw new Error(`not a submission id: ${id}`);
    return `contexts/${id}.tar.gz`;
  }

  async stagePart(id: string, body: AsyncIterable<Uint8Array>, options: StagePartOptions): Promise<number> {
    // Parts at or past `offset` were never recorded (or the upload starts over at 0): they go.
    for (const part of await this.#parts(id)) if (partOffset(part.key) >= options.offset) await this.store.delete(part.key);
    const key = partKey(id, options.offset);
    let size = 0;
    const limited = Readable.from(
      (async function* () {
        for await (const chunk of body) {
          size += chunk.byteLength;
          if (size > options.maxBytes) throw new StagePartError('too_large', `A part carries at most ${options.maxBytes} bytes.`);
          yield chunk;
        }
      })(),
      { objectMode: false },
    );
    try {
      await this.store.put(key, limited);
    } catch (err) {
      await this.store.delete(key).catch(() => undefined);
      if (err instanceof BackupStoreFullError) throw new StagePartError('store_full', 'The uploads store is full.');
      throw err;
    }
    if (size === 0) await this.store.delete(key);
    return options.offset + size;
  }

  async stagedBytes(id: string): Promise<number> {
    return (await this.#parts(id)).reduce((sum, part) => sum + part.size, 0);
  }

  async commit(id: string): Promise<{ sha256: string; size: number }> {
    const parts = await this.#parts(id);
    let expected = 0;
    for (const part of parts) {
      if (partOffset(part.key) !== expected) throw new Error(`the staged parts of ${id} are not contiguous at ${expected}`);
      expected += part.size;
    }
    const hash = createHash('sha256');
    const store = this.store;
    const joined = Readable.from(
      (async function* () {
        for (const part of parts) {
          for await (const chunk of (await store.get(part.key)) as AsyncIterable<Buffer>) {
            hash.update(chunk);
            yield chunk;
          }
        }
      })(),
      { objectMode: false },
    );
    const { size } = await this.store.put(this.#stored(id), joined);
    for (const part of parts) await this.store.delete(part.key);
    return { sha256: hash.digest('hex'), size };
  }

  async open(id: string): Promise<Readable | undefined> {
    try {
      return await this.store.get(this.#stored(id));
    } catch (err) {
      if (err instanceof BackupNotFoundError) return undefined;
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    for (const part of await this.#parts(id)) await this.store.delete(part.key);
    await this.store.delete(this.#stored(id));
  }
}
