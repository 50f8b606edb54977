/**
 * What passes between the service and a file Job's pod: the operation as argv (values as separate
 * entries, never a shell's text), a write's content as base64 in chunked environment variables,
 * and the result as one marked line of JSON on stdout, read back from the pod's log (stdout and
 * stderr are merged there, hence the marker).
 */
import { z } from 'zod';

/** A read over this is 413 on Kubernetes: the answer travels back through a pod log line. */
export const JOB_READ_MAX_BYTES = 1024 * 1024;
/** A write over this is 413 on Kubernetes: the content travels through the Job's spec. */
export const JOB_WRITE_MAX_BYTES = 256 * 1024;
/** A listing through a Job stops here (`truncated: true`). */
export const JOB_LIST_MAX_ENTRIES = 2000;
/**
 * Base64 characters per environment variable: Linux refuses one argv/env string over 128 KiB
 * (MAX_ARG_STRLEN), so every chunk stays well under it.
 */
export const CONTENT_CHUNK_CHARS = 96 * 1024;
export const CONTENT_PARTS_ENV = 'FELIS_CONTENT_PARTS';
export const contentPartEnv = (index: number) => `FELIS_CONTENT_${index}`;
/** The prefix of the result line; anything else in the log is the process's own noise. */
export const RESULT_MARKER = 'FELIS_FILES_RESULT ';

export const fileOpSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('list'), path: z.string() }),
  z.strictObject({ op: z.literal('read'), path: z.string() }),
  z.strictObject({
    op: z.literal('write'),
    path: z.string(),
    expectSha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    createOnly: z.boolean().optional(),
  }),
  z.strictObject({ op: z.literal('delete'), path: z.string() }),
  z.strictObject({ op: z.literal('mkdir'), path: z.string() }),
  z.strictObject({ op: z.literal('rename'), path: z.string(), to: z.string() }),
]);
export type FileOp = z.infer<typeof fileOpSchema>;

/** Operations that only look: their Job mounts the world read-only. */
export const readsOnly = (op: FileOp['op']) => op === 'list' || op === 'read';

/** The CLI's arguments after `files`. */
export function fileOpArgs(op: FileOp, folder: string): string[] {
  const args = [op.op, '--folder', folder, '--path', op.path];
  if (op.op === 'rename') args.push('--to', op.to);
  if (op.op === 'write' && op.expectSha256 !== undefined) args.push('--expect-sha256', op.expectSha256);
  if (op.op === 'write' && op.createOnly) args.push('--create-only');
  return args;
}

/** A write's content as environment variables: the count, then each base64 chunk. */
export function contentEnv(bytes: Uint8Array): Array<{ name: string; value: string }> {
  const text = Buffer.from(bytes).toString('base64');
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += CONTENT_CHUNK_CHARS) parts.push(text.slice(at, at + CONTENT_CHUNK_CHARS));
  return [{ name: CONTENT_PARTS_ENV, value: String(parts.length) }, ...parts.map((value, i) => ({ name: contentPartEnv(i), value }))];
}

/** The content the service put in the environment; throws when a chunk is missing. */
export function contentFromEnv(env: NodeJS.ProcessEnv): Buffer {
  const count = Number(env[CONTENT_PARTS_ENV]);
  if (!Number.isInteger(count) || count < 0 || count > 64) throw new Error(`${CONTENT_PARTS_ENV} must be a small whole number`);
  let text = '';
  for (let i = 0; i < count; i++) {
    const part = env[contentPartEnv(i)];
    if (part === undefined) throw new Error(`${contentPartEnv(i)} is missing`);
    text += part;
  }
  return Buffer.from(text, 'base64');
}

export const fileResultSchema = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), result: z.record(z.string(), z.unknown()) }),
  z.strictObject({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type FileResult = z.infer<typeof fileResultSchema>;

/** The codes a pod may report that the API answers as they are; anything else is the Job failing. */
export const CLIENT_CODES = new Set(['bad_path', 'bad_request', 'not_found', 'file_changed', 'file_exists', 'too_large', 'volume_full']);

export const resultLine = (result: FileResult) => `${RESULT_MARKER}${JSON.stringify(result)}`;

/** The last result line among a log's lines, checked; undefined when there is none. */
export function resultOf(lines: Iterable<string>): FileResult | undefined {
  let found: FileResult | undefined;
  for (const line of lines) {
    if (!line.startsWith(RESULT_MARKER)) continue;
    try {
      const parsed = fileResultSchema.safeParse(JSON.parse(line.slice(RESULT_MARKER.length)));
      if (parsed.success) found = parsed.data;
    } catch {
      // a cut or garbled line: not a result
    }
  }
  return found;
}
