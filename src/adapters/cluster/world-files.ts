/**
 * A world's file operations as the worlds feature uses them, whoever performs them: the feature
 * on a folder of this process, or the Kubernetes adapter by a Job on the server's claim
 * (kubernetes/world-files.ts). Both confine a client's path by the one rule here.
 */
import { DomainError } from '../../lib/errors.js';

const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

export const badPath = (why: string) => new DomainError('bad_path', `The path ${why}.`);

/**
 * A client's path inside a world, as safe segments: relative, no `..`, no NUL, no backslash (one
 * separator only), at most 4,096 bytes with names of at most 255. `''` and `.` are the world itself.
 */
export function worldPathSegments(path: string): string[] {
  if (path.includes('\0')) throw badPath('holds a NUL byte');
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw badPath(`is longer than ${MAX_PATH_BYTES} bytes`);
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw badPath('must be relative to the world');
  if (path.includes('\\')) throw badPath('uses a backslash; separate folders with /');
  const segments = path.split('/').filter((s) => s !== '' && s !== '.');
  for (const segment of segments) {
    if (segment === '..') throw badPath('leads out of the world (..)');
    if (Buffer.byteLength(segment) > MAX_NAME_BYTES) throw badPath(`has a name longer than ${MAX_NAME_BYTES} bytes`);
  }
  return segments;
}

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
