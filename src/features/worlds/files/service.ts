import { createHash } from 'node:crypto';
import type { WorldFileOps } from '../../../adapters/cluster/world-files.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { holdWorld, newId, requireStopped, requireStoppedWorld, type Caller } from '../jobs/index.js';
import { fileOpsOf } from '../volumes/index.js';
import type { WorldsParts } from '../volumes/index.js';
import type { ServersParts } from '../../servers/index.js';

/**
 * The file routes' operations on a stopped world the caller may touch (owner or staff), wherever
 * its volume is: a folder of this process, or a short Job on the server's claim.
 */

type FileDeps = Pick<Deps & WorldsParts, 'database' | 'cluster' | 'config' | 'worlds' | 'clock' | 'random' | 'log'> & ServersParts;
interface FileTarget {
  serverName: string;
  caller: Caller;
  path: string;
}

const openWorld = (deps: FileDeps, name: string, caller: Caller, need: 'files.read' | 'files.write' = 'files.read'): Promise<WorldFileOps> =>
  requireStoppedWorld(deps, name, caller, need, () => fileOpsOf(deps));

/** Runs a change to a world's files under its lock (behind other short writes), stopped server checked again. */
async function changeWorld<T>(deps: FileDeps, name: string, caller: Caller, change: (ops: WorldFileOps) => Promise<T>): Promise<T> {
  const ops = await openWorld(deps, name, caller, 'files.write');
  const lock = await holdWorld(deps, name, newId(deps.random), 'file_write', { queueBehind: 'file_write' });
  try {
    await requireStopped(deps, name);
    return await change(ops);
  } finally {
    await lock.release();
  }
}

export async function listFiles(deps: FileDeps, { serverName, caller, path }: FileTarget) {
  return (await openWorld(deps, serverName, caller)).list(serverName, path);
}

export async function readFile(deps: FileDeps, { serverName, caller, path }: FileTarget) {
  return (await openWorld(deps, serverName, caller)).read(serverName, path);
}

/**
 * Writes a file atomically from the editor's base64: `expectSha256` (the file must still hash to
 * it) or `createOnly` (nothing may be there yet), never both; `contentSha256` checks the bytes.
 */
export async function writeFile(
  deps: FileDeps,
  target: FileTarget & { content: string; contentSha256?: string; expectSha256?: string; createOnly?: boolean },
) {
  if (target.createOnly && target.expectSha256) throw new DomainError('bad_request', 'Send expect_sha256 or create_only, not both.');
  const bytes = Buffer.from(target.content, 'base64');
  if (target.contentSha256 !== undefined && createHash('sha256').update(bytes).digest('hex') !== target.contentSha256) {
    throw new DomainError('digest_mismatch', 'content_sha256 does not match the content.');
  }
  const { serverName, caller, path } = target;
  return changeWorld(deps, serverName, caller, (ops) => ops.write(serverName, path, bytes, { expectSha256: target.expectSha256, createOnly: target.createOnly }));
}

export async function removePath(deps: FileDeps, { serverName, caller, path }: FileTarget) {
  return changeWorld(deps, serverName, caller, (ops) => ops.remove(serverName, path));
}

export async function makeFolder(deps: FileDeps, { serverName, caller, path }: FileTarget) {
  return changeWorld(deps, serverName, caller, (ops) => ops.mkdir(serverName, path));
}

export async function renamePath(deps: FileDeps, { serverName, caller, path, to }: FileTarget & { to: string }) {
  return changeWorld(deps, serverName, caller, (ops) => ops.rename(serverName, path, to));
}

/** Stores a small upload's raw bytes as they arrive (`overwrite` replaces a file there). */
export async function uploadFile(deps: FileDeps, { serverName, caller, path, body, overwrite }: FileTarget & { body: AsyncIterable<Uint8Array>; overwrite: boolean }) {
  return changeWorld(deps, serverName, caller, (ops) => ops.upload(serverName, path, body, { overwrite }));
}
