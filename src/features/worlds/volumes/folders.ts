import type { WorldFileOps, WriteOptions } from '../../../adapters/cluster/world-files.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { deleteWorldPath, listFolder, makeWorldFolder, readWorldFile, renameWorldPath, uploadWorldFile, writeWorldFile } from './files.js';
import { recoverWorldFolder } from './steps.js';
import type { WorldFolders, WorldsParts } from './runtime.js';

/**
 * The world volumes this process reaches as folders of its own (the simulated cluster): the file
 * routes' operations act on them here; elsewhere they are the cluster's Jobs (the runtime's `files`).
 */

/** The world folders this process can reach, or 503 (worlds on cluster volumes are reached by jobs). */
export function localFolders(deps: Pick<Deps & WorldsParts, 'worlds'>): WorldFolders {
  if (!deps.worlds.folders) throw new DomainError('unavailable', 'World files cannot be reached from this service.');
  return deps.worlds.folders;
}

/** The world folders of this process (the simulated cluster's volumes). */
class LocalWorldFileOps implements WorldFileOps {
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
export function fileOpsOf(deps: Pick<Deps & WorldsParts, 'worlds'>): WorldFileOps {
  if (deps.worlds.files) return deps.worlds.files;
  if (deps.worlds.folders) return new LocalWorldFileOps(deps.worlds.folders);
  throw new DomainError('unavailable', 'World files cannot be reached from this service.');
}
