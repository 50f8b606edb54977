/**
 * The pod's side of a file Job: `world-job.js files <op> --folder /data --path <p> [--to <p>]
 * [--expect-sha256 <hex>] [--create-only]`, a write's content from the environment. It runs the
 * same confined functions as the service's local path and prints its result as marked lines
 * (src/adapters/cluster/world-file-protocol.ts).
 */
import { z } from 'zod';
import { contentFromEnv, fileOpSchema, JOB_LIST_MAX_ENTRIES, JOB_READ_MAX_BYTES, resultLines, type FileOp, type FileResult } from '../../../adapters/cluster/world-file-protocol.js';
import { DomainError } from '../../../lib/errors.js';
import { jobArgs } from '../../../lib/job-args.js';
import { deleteWorldPath, listFolder, makeWorldFolder, readWorldFile, renameWorldPath, writeWorldFile } from './files.js';

function fileOpFromArgs(argv: string[]): { op: FileOp; folder: string } {
  const { verb: name, values, folder } = jobArgs(argv, {
    path: { type: 'string' },
    to: { type: 'string' },
    'expect-sha256': { type: 'string' },
    'create-only': { type: 'boolean' },
  });
  const op = fileOpSchema.parse({
    op: name,
    path: values.path,
    ...(name === 'rename' ? { to: values.to } : {}),
    ...(name === 'write' && values['expect-sha256'] !== undefined ? { expectSha256: values['expect-sha256'] } : {}),
    ...(name === 'write' && values['create-only'] ? { createOnly: true } : {}),
  });
  return { op, folder };
}

async function perform(op: FileOp, folder: string, env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  switch (op.op) {
    case 'list':
      return listFolder(folder, op.path, JOB_LIST_MAX_ENTRIES);
    case 'read':
      return readWorldFile(folder, op.path, JOB_READ_MAX_BYTES);
    case 'write':
      return writeWorldFile(folder, op.path, contentFromEnv(env), { expectSha256: op.expectSha256, createOnly: op.createOnly });
    case 'delete':
      return deleteWorldPath(folder, op.path);
    case 'mkdir':
      return makeWorldFolder(folder, op.path);
    case 'rename':
      return renameWorldPath(folder, op.path, op.to);
  }
}

/** Exit code: 0 done, 1 the operation reported a failure, 2 bad arguments. */
/** `out` may return a promise: the caller exits after it, and a 1 MiB read is more than a pipe holds. */
export async function runFilesCommand(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: (line: string) => void | Promise<void>,
  err: (line: string) => void,
): Promise<number> {
  let parsed: ReturnType<typeof fileOpFromArgs>;
  try {
    parsed = fileOpFromArgs(argv);
  } catch (e) {
    err(`world-job files: ${e instanceof z.ZodError ? z.prettifyError(e) : e instanceof Error ? e.message : String(e)}`);
    for (const line of resultLines({ ok: false, code: 'failed', message: 'bad arguments' })) await out(line);
    return 2;
  }
  let result: FileResult;
  try {
    result = { ok: true, result: await perform(parsed.op, parsed.folder, env) };
  } catch (e) {
    if (e instanceof DomainError) result = { ok: false, code: e.code, message: e.message };
    else {
      err(`world-job files: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      result = { ok: false, code: 'failed', message: 'the operation failed' };
    }
  }
  for (const line of resultLines(result)) await out(line);
  return result.ok ? 0 : 1;
}
