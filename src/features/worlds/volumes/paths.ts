import { lstat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { badPath, worldPathSegments } from '../../../adapters/cluster/world-files.js';
import { isErrno } from '../../../lib/errno.js';

/**
 * The absolute path of `segments` under `root`, refusing a symbolic link anywhere on the way: a
 * link could lead out of the world, and no file route follows one. `finalLink: 'allow'` lets the
 * last segment be a link that is acted on itself (deleted or renamed), never followed.
 */
async function resolveInWorld(root: string, segments: string[], finalLink: 'refuse' | 'allow' = 'refuse'): Promise<string> {
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
const displayPath = (segments: string[]) => segments.join('/');

/** A path of a world folder, checked and resolved. */
export async function worldPath(root: string, path: string, finalLink: 'refuse' | 'allow' = 'refuse') {
  const segments = worldPathSegments(path);
  return { segments, shown: displayPath(segments), abs: await resolveInWorld(root, segments, finalLink) };
}
