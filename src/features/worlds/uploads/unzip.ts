import { createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm, statfs } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { FileOpError } from '../../../db/schema/world-files.js';
import { worldPathSegments } from '../../../adapters/cluster/world-files.js';
import { isErrno } from '../../../lib/errno.js';
import { DomainError } from '../../../lib/errors.js';
import { worldPath } from '../volumes/index.js';
import { FileOpFailure } from './ops.js';

/** An archive's listing may name no more than this many conflicts; `conflict_count` says how many there are. */
export const MAX_CONFLICTS = 200;
/** What the room check adds per entry for its inode and directory block. */
const ENTRY_OVERHEAD = 4096;
/** The working folder an unzip extracts into, beside its destination (one volume: every move is a rename). */
export const UNZIP_TEMP_PREFIX = '.felis-unzip-';

export interface UnzipLimits {
  maxBytes: number;
  maxEntries: number;
}

function fail(detail: FileOpError): never {
  throw new FileOpFailure(detail);
}
function invalid(message: string, entry?: string): never {
  return fail({ code: 'archive_invalid', message, ...(entry ? { entry } : {}) });
}

const openZip = promisify<string, yauzl.Options, ZipFile>(yauzl.open);

interface PlannedFile {
  entry: Entry;
  name: string;
  mode: number;
}
interface Plan {
  files: PlannedFile[];
  /** Every folder the archive makes, named or implied, sorted so a folder comes before its contents. */
  dirs: string[];
  isDir: Set<string>;
  bytes: number;
}

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const UNIX = 3;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An entry's name as its maker meant it: UTF-8 when flagged or valid, else the bytes as Latin-1; backslashes as folders. */
function entryName(entry: Entry): string {
  const raw = entry.fileNameRaw;
  let name: string;
  try {
    name = utf8.decode(raw);
  } catch {
    name = (entry.generalPurposeBitFlag & 0x800) !== 0 ? raw.toString('utf8') : raw.toString('latin1');
  }
  return name.replaceAll('\\', '/');
}

/**
 * A cleaned entry name relative to the destination, or undefined for one that must not be
 * extracted: empty, a NUL, absolute, a drive letter, or a climb out. Judged as text; nothing is
 * resolved through it until the targets are checked link by link.
 */
function cleanEntry(raw: string): string | undefined {
  if (raw === '' || raw.includes('\0') || raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return undefined;
  const name = posix.normalize(raw).replace(/\/+$/, '');
  if (name === '..' || name.startsWith('../')) return undefined;
  return name === '' ? '.' : name;
}

/** Reads the central directory once, checking every entry's name, type and size before a byte is written. */
async function planUnzip(zip: ZipFile, dest: string, limits: UnzipLimits): Promise<Plan> {
  const plan: Plan = { files: [], dirs: [], isDir: new Set(), bytes: 0 };
  if (zip.entryCount > limits.maxEntries) {
    fail({ code: 'archive_too_large', message: `The archive has ${zip.entryCount} entries; at most ${limits.maxEntries} are extracted.` });
  }
  const seen = new Set<string>();
  const entries = await new Promise<Entry[]>((resolve, reject) => {
    const all: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      all.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(all));
    zip.on('error', reject);
    zip.readEntry();
  }).catch((err: unknown) => invalid(`The archive is not a readable zip: ${(err as Error).message}`));
  for (const entry of entries) {
    const raw = entryName(entry);
    const name = cleanEntry(raw);
    if (name === undefined) fail({ code: 'archive_unsafe', entry: raw, message: `${raw} leads outside the folder it would be extracted into.` });
    if (name === '__MACOSX' || name.startsWith('__MACOSX/')) continue;
    try {
      worldPathSegments(posix.join(dest, name));
    } catch (err) {
      if (err instanceof DomainError) fail({ code: 'archive_unsafe', entry: raw, message: `${raw}: ${err.message}` });
      throw err;
    }
    const unixMode = entry.versionMadeBy >> 8 === UNIX ? entry.externalFileAttributes >>> 16 : 0;
    const type = unixMode & S_IFMT;
    const isDir = raw.endsWith('/') || type === S_IFDIR || (type === 0 && (entry.externalFileAttributes & 0x10) !== 0);
    if (type === S_IFLNK) fail({ code: 'archive_symlink', entry: raw, message: `${raw} is a symbolic link; an archive containing links is not extracted.` });
    if (isDir) {
      if (name !== '.') plan.isDir.add(name);
      continue;
    }
    if (type !== 0 && type !== S_IFREG) fail({ code: 'archive_unsafe', entry: raw, message: `${raw} is not a regular file.` });
    if (name === '.') fail({ code: 'archive_unsafe', entry: raw, message: `${raw} names the destination folder itself.` });
    if (seen.has(name)) invalid(`${raw} appears in the archive twice.`, raw);
    if (entry.isEncrypted()) invalid(`${raw} is encrypted.`, raw);
    seen.add(name);
    plan.bytes += entry.uncompressedSize;
    if (plan.bytes > limits.maxBytes) {
      fail({ code: 'archive_too_large', message: `The archive would write more than ${limits.maxBytes} bytes (unzip_max_bytes); nothing was changed.` });
    }
    plan.files.push({ entry, name: name, mode: (unixMode & 0o111) !== 0 ? 0o755 : 0o644 });
  }
  for (const file of plan.files) {
    for (let d = posix.dirname(file.name); d !== '.' && d !== '/'; d = posix.dirname(d)) plan.isDir.add(d);
  }
  for (const file of plan.files) {
    if (plan.isDir.has(file.name)) invalid(`${file.name} is both a file and a folder in the archive.`, file.name);
  }
  if (plan.files.length === 0 && plan.isDir.size === 0) invalid('The archive has nothing to extract.');
  plan.dirs = [...plan.isDir].sort();
  plan.files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return plan;
}

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined;
    throw err;
  }
}

function typeConflict(at: string, why: string): never {
  return fail({ code: 'type_conflict', entry: at, message: `${at} ${why}; nothing was changed.` });
}

/** What the world already has where the archive lands: folders that merge, files it would replace. */
async function checkTargets(destAbs: string, dest: string, plan: Plan) {
  const present = new Set<string>();
  const replaced = new Set<string>();
  const absent = (name: string) => posix.dirname(name) !== '.' && !present.has(posix.dirname(name));
  for (const d of plan.dirs) {
    if (absent(d)) continue;
    const stat = await lstatOrUndefined(join(destAbs, d));
    if (!stat) continue;
    if (stat.isDirectory()) present.add(d);
    else typeConflict(posix.join(dest, d), stat.isSymbolicLink() ? 'is a link in the world, and the archive has a folder there' : 'is a file in the world, and the archive has a folder there');
  }
  for (const f of plan.files) {
    if (absent(f.name)) continue;
    const stat = await lstatOrUndefined(join(destAbs, f.name));
    if (!stat) continue;
    if (stat.isFile()) replaced.add(f.name);
    else typeConflict(posix.join(dest, f.name), stat.isDirectory() ? 'is a folder in the world, and the archive has a file there' : 'is a link or special file in the world, and the archive has a file there');
  }
  return { present, replaced };
}

/** Passes an entry's bytes on, counting them, and stops one that runs past the size it declared. */
function counted(name: string, declared: number, onBytes: (n: number) => void): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > declared) return callback(new FileOpFailure({ code: 'archive_invalid', entry: name, message: `${name} holds more bytes than it declares; nothing was changed.` }));
      onBytes(chunk.length);
      callback(null, chunk);
    },
  });
}

async function extractAll(zip: ZipFile, staged: string, plan: Plan, onBytes: (n: number) => void): Promise<void> {
  const openStream = promisify<Entry, Readable>(zip.openReadStream.bind(zip));
  for (const d of plan.dirs) await mkdir(join(staged, d), { mode: 0o755 });
  for (const f of plan.files) {
    let source: Readable;
    try {
      source = await openStream(f.entry);
    } catch (err) {
      return invalid(`${f.name} in the archive cannot be read: ${(err as Error).message}; nothing was changed.`, f.name);
    }
    const out = createWriteStream(join(staged, f.name), { flags: 'wx', mode: f.mode });
    try {
      await pipeline(source, counted(f.name, f.entry.uncompressedSize, onBytes), out);
    } catch (err) {
      if (err instanceof FileOpFailure) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code === 'string' && code.startsWith('E')) throw err;
      // yauzl's own refusals: a CRC or size that does not match, a damaged stream.
      return invalid(`${f.name} in the archive is damaged: ${(err as Error).message}; nothing was changed.`, f.name);
    }
  }
}

/**
 * Renames the extracted tree into place. A folder the world lacks moves whole; one it has is
 * descended into; a file it has is first moved aside into `old`. Every move is journaled and, if one
 * fails, undone in reverse, so a replaced file comes back.
 */
async function placeAll(destAbs: string, staged: string, old: string, plan: Plan, present: Set<string>, replaced: Set<string>): Promise<void> {
  const kids = new Map<string, string[]>();
  const add = (name: string) => kids.set(posix.dirname(name), [...(kids.get(posix.dirname(name)) ?? []), name]);
  plan.dirs.forEach(add);
  plan.files.forEach((f) => add(f.name));
  const journal: Array<{ from: string; to: string }> = [];
  const move = async (from: string, to: string) => {
    await rename(from, to);
    journal.push({ from, to });
  };
  const place = async (dir: string): Promise<void> => {
    for (const child of kids.get(dir) ?? []) {
      const src = join(staged, child);
      const dst = join(destAbs, child);
      if (plan.isDir.has(child) && present.has(child)) await place(child);
      else if (replaced.has(child)) {
        const aside = join(old, child);
        await mkdir(dirname(aside), { recursive: true });
        await move(dst, aside);
        await move(src, dst);
      } else await move(src, dst);
    }
  };
  try {
    await place('.');
  } catch (err) {
    for (const { from, to } of journal.reverse()) await rename(to, from).catch(() => {});
    throw err;
  }
}

/** Removes working folders an unzip that was killed left in `destAbs`: they hold only copies. */
async function sweepTemps(destAbs: string): Promise<void> {
  for (const name of await readdir(destAbs)) {
    if (name.startsWith(UNZIP_TEMP_PREFIX)) await rm(join(destAbs, name), { recursive: true, force: true });
  }
}

/**
 * Extracts the .zip at `path` (a world path) into the folder holding it, all or nothing: every
 * check that can refuse the archive (names, types, sizes and counts against the limits, what the
 * world has, the room) runs before a byte is written; the entries go to a working folder beside
 * the destination and are renamed into place only once all of them were written. Without
 * `overwrite` an archive that would replace a file changes nothing (file_exists, with the list).
 */
export async function unzipInWorld(
  root: string,
  path: string,
  options: { overwrite: boolean; limits: UnzipLimits; workId: string; onTotal?: (bytes: number) => Promise<void>; onProgress?: (done: number) => Promise<void> },
): Promise<{ files: number; bytes: number }> {
  const { shown, segments, abs } = await worldPath(root, path);
  if (!shown.toLowerCase().endsWith('.zip')) fail({ code: 'bad_path', message: `${shown} is not a .zip archive.` });
  const stat = await lstatOrUndefined(abs);
  if (!stat) fail({ code: 'not_found', message: `Nothing at ${shown}.` });
  if (!stat.isFile()) fail({ code: 'bad_path', message: `${shown} is not a file.` });
  const dest = segments.slice(0, -1).join('/');
  const destAbs = dirname(abs);

  let zip: ZipFile;
  try {
    zip = await openZip(abs, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true });
  } catch (err) {
    return invalid(`${shown} is not a readable zip archive: ${(err as Error).message}`);
  }
  try {
    const plan = await planUnzip(zip, dest, options.limits);
    await options.onTotal?.(plan.bytes);
    const { present, replaced } = await checkTargets(destAbs, dest, plan);
    if (replaced.size > 0 && !options.overwrite) {
      const list = [...replaced].map((n) => posix.join(dest, n)).sort();
      fail({
        code: 'file_exists',
        message: `${list.length} files in the archive already exist in the world; extract again with overwrite to replace them.`,
        conflicts: list.slice(0, MAX_CONFLICTS),
        conflict_count: list.length,
      });
    }
    await sweepTemps(destAbs);
    const need = plan.bytes + (plan.files.length + plan.dirs.length) * ENTRY_OVERHEAD;
    const fs = await statfs(root);
    const avail = fs.bavail * fs.bsize;
    if (need > avail) {
      fail({ code: 'volume_full', need, avail, message: `Extracting ${shown} needs ${need} bytes and the world volume has ${avail} free; nothing was changed.` });
    }

    const tmp = join(destAbs, UNZIP_TEMP_PREFIX + options.workId);
    const staged = join(tmp, 'new');
    const old = join(tmp, 'old');
    await mkdir(staged, { recursive: true, mode: 0o700 });
    try {
      let done = 0;
      let reporting = Promise.resolve();
      await extractAll(zip, staged, plan, (n) => {
        done += n;
        const at = done;
        reporting = reporting.then(() => options.onProgress?.(at)).catch(() => {});
      });
      await reporting;
      await placeAll(destAbs, staged, old, plan, present, replaced);
    } finally {
      // After a success tmp holds only what the archive replaced; after a failure, all it wrote.
      await rm(tmp, { recursive: true, force: true });
    }
    return { files: plan.files.length, bytes: plan.bytes };
  } finally {
    zip.close();
  }
}
