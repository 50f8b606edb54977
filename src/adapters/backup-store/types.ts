import type { Readable } from 'node:stream';

/**
 * Where world archives are kept. A key is the store's own name for an object (`backups/<id>.tar.gz`);
 * it is a storage reference and is never returned to a client.
 */
export interface BackupStore {
  readonly kind: 'local' | 's3';
  /** Streams `body` into the object `key` (replacing it); resolves with the bytes written. */
  put(key: string, body: Readable): Promise<{ size: number }>;
  /** The object's bytes; BackupNotFoundError when there is none. */
  get(key: string): Promise<Readable>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  /** The objects whose keys start with `prefix` (a folder-like `a/b/`), in key order, with their sizes. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Bytes the store can still take, when it knows (a local disk); undefined for a bucket (its quota answers a put). */
  freeBytes?(): Promise<number>;
  /** Removes what writers killed mid-write left, untouched since `before` (a store that keeps none has none). */
  sweepPartials?(before: Date): Promise<number>;
}

export interface StoredObject {
  key: string;
  size: number;
}

/** The store has no room for the object (a full disk, a refused quota). */
export class BackupStoreFullError extends Error {
  override name = 'BackupStoreFullError';
}

export class BackupNotFoundError extends Error {
  override name = 'BackupNotFoundError';
}

/** Keys are ours, never a client's; this keeps a bug from walking out of the store's root. */
export function checkKey(key: string): string {
  if (!/^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/.test(key) || key.includes('..')) {
    throw new Error(`not a store key: ${JSON.stringify(key)}`);
  }
  return key;
}
