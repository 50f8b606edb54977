import { lstat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { DomainError } from '../../lib/errors.js';
import { isErrno } from '../../lib/errno.js';

export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;

const badPath = (why: string) => new DomainError('bad_path', `The path ${why}.`);

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


/**
 * The absolute path of `segments` under `root`, refusing a symbolic link anywhere on the way: a
 * link could lead out of the world, and no file route follows one. `finalLink: 'allow'` lets the
 * last segment be a link that is acted on itself (deleted or renamed), never followed.
 */
export async function resolveInWorld(root: string, segments: string[], finalLink: 'refuse' | 'allow' = 'refuse'): Promise<string> {
  let current = root;
  for (let i = 0; i < segments.length; i++) {
    current = join(current, segments[i]!);
    let isLink: boolean;
    try {
      isLink = (await lstat(current)).isSymbolicLink();
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) break;
      throw err;
    }
    if (isLink && (i < segments.length - 1 || finalLink === 'refuse')) throw badPath('passes through a symbolic link');
  }
  const resolved = join(root, ...segments);
  if (resolved !== root && !resolved.startsWith(root + sep)) throw badPath('leads out of the world');
  return resolved;
}

/** The path as the API echoes it: segments joined by `/`. */
export const displayPath = (segments: string[]) => segments.join('/');
