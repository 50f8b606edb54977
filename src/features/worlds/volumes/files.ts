import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, statfs, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DomainError } from '../../../lib/errors.js';
import { isErrno } from '../../../lib/errno.js';
import { hashStream } from './archive.js';
import { worldPath } from './paths.js';

/** The editor reads whole files in one answer; a bigger one is 413, never cut short. */
const READ_MAX_BYTES = 4 * 1024 * 1024;
const LIST_MAX_ENTRIES = 1000;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return undefined;
    throw err;
  }
}

const notFound = (path: string) => new DomainError('not_found', `Nothing at ${path || 'the world root'}.`);

function volumeError(err: unknown): unknown {
  if (isErrno(err, 'ENOSPC') || isErrno(err, 'EDQUOT')) return new DomainError('volume_full', 'The world volume is full.');
  return err;
}

export async function listFolder(root: string, path: string, maxEntries = LIST_MAX_ENTRIES) {
  const { shown, abs } = await worldPath(root, path);
  const stat = await lstatOrUndefined(abs);
  if (!stat) throw notFound(shown);
  if (!stat.isDirectory()) throw new DomainError('bad_request', `${shown} is a file, not a folder.`);
  const names = (await readdir(abs)).sort();
  const entries = [];
  for (const name of names.slice(0, maxEntries)) {
    const entry = await lstatOrUndefined(join(abs, name));
    if (!entry) continue;
    entries.push({ name, size: entry.isDirectory() ? 0 : entry.size, is_dir: entry.isDirectory(), mod_time: entry.mtime.toISOString() });
  }
  const fs = await statfs(root);
  return { path: shown, entries, truncated: names.length > maxEntries, free_bytes: fs.bavail * fs.bsize };
}

export async function readWorldFile(root: string, path: string, maxBytes = READ_MAX_BYTES) {
  const { shown, abs } = await worldPath(root, path);
  const stat = await lstatOrUndefined(abs);
  if (!stat) throw notFound(shown);
  if (!stat.isFile()) throw new DomainError('bad_request', `${shown} is not a file.`);
  if (stat.size > maxBytes) throw new DomainError('too_large', `${shown} is larger than ${maxBytes} bytes; download it instead.`);
  const bytes = await readFile(abs);
  const hash = sha256(bytes);
  return { path: shown, content: bytes.toString('base64'), sha256: hash, content_sha256: hash };
}

/** The sha-256 of a file as stored, or undefined when nothing is there. */
async function currentHash(abs: string): Promise<string | undefined> {
  const stat = await lstatOrUndefined(abs);
  if (!stat) return undefined;
  if (!stat.isFile()) throw new DomainError('bad_request', 'Only a file can be written.');
  return (await hashStream(createReadStream(abs))).sha256;
}

/** A sibling temporary name: written there, then renamed over the target in one step. */
const temporaryBeside = (abs: string, tag: string) => join(dirname(abs), `.felis-${tag}-${process.pid}-${Date.now()}.partial`);

async function requireParent(abs: string, shown: string): Promise<void> {
  const parent = await lstatOrUndefined(dirname(abs));
  if (!parent?.isDirectory()) throw new DomainError('not_found', `The folder of ${shown} does not exist.`);
}

/**
 * Replaces a file's bytes atomically. `expectSha256`: the file must still hash to it (409
 * file_changed); `createOnly`: nothing may be there yet (409 file_exists). The caller holds the
 * world's lock, so the check and the rename see the same file.
 */
export async function writeWorldFile(
  root: string,
  path: string,
  bytes: Uint8Array,
  options: { expectSha256?: string; createOnly?: boolean },
): Promise<{ path: string; status: 'created' | 'written'; sha256: string }> {
  const { shown, segments, abs } = await worldPath(root, path);
  if (segments.length === 0) throw new DomainError('bad_path', 'The world root is not a file.');
  await requireParent(abs, shown);
  const before = await currentHash(abs);
  if (options.createOnly && before !== undefined) throw new DomainError('file_exists', `${shown} already exists.`);
  if (options.expectSha256 !== undefined && before !== options.expectSha256) {
    throw new DomainError('file_changed', `${shown} changed since it was read.`);
  }
  const partial = temporaryBeside(abs, 'write');
  try {
    await writeFile(partial, bytes, { flag: 'wx' });
    await rename(partial, abs);
  } catch (err) {
    await rm(partial, { force: true });
    throw volumeError(err);
  }
  return { path: shown, status: before === undefined ? 'created' : 'written', sha256: sha256(bytes) };
}

/** Streams an upload into place: a sibling temporary file renamed over the target once complete. */
export async function uploadWorldFile(
  root: string,
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  options: { overwrite: boolean },
): Promise<{ path: string; status: 'created' | 'written'; size: number }> {
  const { shown, segments, abs } = await worldPath(root, path);
  if (segments.length === 0) throw new DomainError('bad_path', 'The world root is not a file.');
  await requireParent(abs, shown);
  const existing = await lstatOrUndefined(abs);
  if (existing && !options.overwrite) throw new DomainError('file_exists', `${shown} already exists.`);
  if (existing && !existing.isFile()) throw new DomainError('bad_request', 'Only a file can be replaced.');
  const partial = temporaryBeside(abs, 'upload');
  const out = createWriteStream(partial, { flags: 'wx' });
  let size = 0;
  try {
    for await (const chunk of chunks) {
      size += chunk.length;
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    await rename(partial, abs);
  } catch (err) {
    out.destroy();
    await rm(partial, { force: true });
    throw volumeError(err);
  }
  return { path: shown, status: existing ? 'written' : 'created', size };
}

/** Deletes a file, a link (never what it names) or a folder with everything in it. */
export async function deleteWorldPath(root: string, path: string) {
  const { shown, segments, abs } = await worldPath(root, path, 'allow');
  if (segments.length === 0) throw new DomainError('bad_path', 'The world root cannot be deleted.');
  if (!(await lstatOrUndefined(abs))) throw notFound(shown);
  await rm(abs, { recursive: true, force: true });
  return { path: shown, status: 'deleted' as const };
}

export async function makeWorldFolder(root: string, path: string) {
  const { shown, segments, abs } = await worldPath(root, path);
  if (segments.length === 0) throw new DomainError('file_exists', 'The world root exists.');
  await requireParent(abs, shown);
  if (await lstatOrUndefined(abs)) throw new DomainError('file_exists', `${shown} already exists.`);
  await mkdir(abs).catch((err: unknown) => {
    throw volumeError(err);
  });
  return { path: shown, status: 'created' as const };
}

/** Moves a path to `to`, never over something (409 file_exists). */
export async function renameWorldPath(root: string, path: string, to: string) {
  const from = await worldPath(root, path, 'allow');
  const target = await worldPath(root, to);
  if (from.segments.length === 0 || target.segments.length === 0) throw new DomainError('bad_path', 'The world root cannot be moved.');
  if (!(await lstatOrUndefined(from.abs))) throw notFound(from.shown);
  if (target.abs.startsWith(from.abs + '/')) throw new DomainError('bad_path', 'A folder cannot move into itself.');
  await requireParent(target.abs, target.shown);
  if (await lstatOrUndefined(target.abs)) throw new DomainError('file_exists', `${target.shown} already exists.`);
  await rename(from.abs, target.abs);
  return { path: from.shown, to: target.shown, status: 'renamed' as const };
}
