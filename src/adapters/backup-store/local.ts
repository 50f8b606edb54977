import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, statfs } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BackupNotFoundError, BackupStoreFullError, checkKey, type BackupStore, type StoredObject } from './types.js';
import { isErrno } from '../../lib/errno.js';


/**
 * A directory on local disk (the embedded default, `DATA_DIR/backups`). An object is written to a
 * temporary name and renamed into place, so a reader never sees half an archive.
 */
export class LocalBackupStore implements BackupStore {
  readonly kind = 'local' as const;
  constructor(readonly root: string) {}

  async put(key: string, body: Readable): Promise<{ size: number }> {
    const path = this.#path(key);
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.partial-${process.pid}-${Date.now()}`;
    const out = createWriteStream(partial, { flags: 'wx' });
    try {
      await pipeline(body, out);
      await rename(partial, path);
    } catch (err) {
      await rm(partial, { force: true });
      if (isErrno(err, 'ENOSPC') || isErrno(err, 'EDQUOT')) throw new BackupStoreFullError('the backup store is full', { cause: err });
      throw err;
    }
    return { size: (await stat(path)).size };
  }

  async get(key: string): Promise<Readable> {
    const path = this.#path(key);
    try {
      await stat(path);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new BackupNotFoundError(`no object ${key}`);
      throw err;
    }
    return createReadStream(path, { highWaterMark: 1 << 20 });
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }

  async list(prefix: string): Promise<StoredObject[]> {
    // The folder the prefix names (`a/b/` lists a/b; `a/b` lists a), then the keys that start with it.
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    if (folder !== '') checkKey(folder);
    const entries = await readdir(join(this.root, folder), { recursive: true, withFileTypes: true }).catch((err: unknown) => {
      if (isErrno(err, 'ENOENT')) return [];
      throw err;
    });
    const found: StoredObject[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || /\.partial-\d+-\d+$/.test(entry.name)) continue;
      const path = join(entry.parentPath, entry.name);
      const key = relative(this.root, path).split(sep).join('/');
      if (!key.startsWith(prefix)) continue;
      const size = await stat(path).then((s) => s.size, () => undefined);
      if (size !== undefined) found.push({ key, size });
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async freeBytes(): Promise<number> {
    await mkdir(this.root, { recursive: true });
    const fs = await statfs(this.root);
    return fs.bavail * fs.bsize;
  }

  /**
   * Removes the partial objects (`<key>.partial-<pid>-<ms>`) not written to since `before`: a
   * writer killed mid-archive leaves one (a living writer keeps touching its own). Resolves how many.
   */
  async sweepPartials(before: Date): Promise<number> {
    let removed = 0;
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true }).catch((err: unknown) => {
      if (isErrno(err, 'ENOENT')) return [];
      throw err;
    });
    for (const entry of entries) {
      if (!entry.isFile() || !/\.partial-\d+-\d+$/.test(entry.name)) continue;
      const path = join(entry.parentPath, entry.name);
      const { mtimeMs } = await stat(path).catch(() => ({ mtimeMs: Infinity }));
      if (mtimeMs >= before.getTime()) continue;
      await rm(path, { force: true });
      removed += 1;
    }
    return removed;
  }

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  #path(key: string): string {
    return join(this.root, checkKey(key));
  }
}
