import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { deleteWorldPath, listFolder, makeWorldFolder, readWorldFile, renameWorldPath, uploadWorldFile, writeWorldFile } from './files.js';
import { recoverWorldFolder } from './restore.js';
import type { WorldFolders } from './runtime.js';

export interface FileEntry {
  name: string;
  size: number;
  is_dir: boolean;
  mod_time: string;
}
export interface FolderListing {
  path: string;
  entries: FileEntry[];
  truncated: boolean;
  free_bytes: number;
}
export interface FileRead {
  path: string;
  content: string;
  sha256: string;
  content_sha256: string;
}
export interface FileWritten {
  path: string;
  status: 'created' | 'written';
  sha256: string;
}
export interface FileDone {
  path: string;
  status: string;
}
export interface FileRenamed extends FileDone {
  to: string;
}
export interface WriteOptions {
  expectSha256?: string;
  createOnly?: boolean;
}

/**
 * The file operations of a world, wherever its volume is: a folder of this process, or a claim
 * reached by a short Job. Paths are the client's; each implementation confines them. A caller
 * holds the world's lock around the operations that change something.
 */
export interface WorldFileOps {
  readonly kind: 'local' | 'kubernetes';
  list(server: string, path: string): Promise<FolderListing>;
  read(server: string, path: string): Promise<FileRead>;
  write(server: string, path: string, bytes: Uint8Array, options: WriteOptions): Promise<FileWritten>;
  remove(server: string, path: string): Promise<FileDone>;
  mkdir(server: string, path: string): Promise<FileDone>;
  rename(server: string, path: string, to: string): Promise<FileRenamed>;
  upload(server: string, path: string, chunks: AsyncIterable<Uint8Array>, options: { overwrite: boolean }): Promise<{ path: string; status: 'created' | 'written'; size: number }>;
}

/** The world folders of this process (the simulated cluster's volumes). */
export class LocalWorldFileOps implements WorldFileOps {
  readonly kind = 'local' as const;

  constructor(private readonly folders: WorldFolders) {}

  async list(server: string, path: string) {
    return listFolder(await this.folders.folder(server), path);
  }

  async read(server: string, path: string) {
    return readWorldFile(await this.folders.folder(server), path);
  }

  async write(server: string, path: string, bytes: Uint8Array, options: WriteOptions) {
    return writeWorldFile(await this.#changing(server), path, bytes, options);
  }

  async remove(server: string, path: string) {
    return deleteWorldPath(await this.#changing(server), path);
  }

  async mkdir(server: string, path: string) {
    return makeWorldFolder(await this.#changing(server), path);
  }

  async rename(server: string, path: string, to: string) {
    return renameWorldPath(await this.#changing(server), path, to);
  }

  async upload(server: string, path: string, chunks: AsyncIterable<Uint8Array>, options: { overwrite: boolean }) {
    return uploadWorldFile(await this.#changing(server), path, chunks, options);
  }

  /** The folder, after finishing or undoing a restore that was cut short. */
  async #changing(server: string): Promise<string> {
    const root = await this.folders.folder(server);
    await recoverWorldFolder(root);
    return root;
  }
}

/** The file operations of this service's worlds, or 503 when no world volume can be reached. */
export function fileOpsOf(deps: Pick<Deps, 'worlds'>): WorldFileOps {
  if (deps.worlds.files) return deps.worlds.files;
  if (deps.worlds.folders) return new LocalWorldFileOps(deps.worlds.folders);
  throw new DomainError('unavailable', 'World files cannot be reached from this service.');
}
