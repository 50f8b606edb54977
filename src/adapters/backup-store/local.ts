import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BackupNotFoundError, BackupStoreFullError, checkKey, type BackupStore } from './types.js';
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

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  #path(key: string): string {
    return join(this.root, checkKey(key));
  }
}
