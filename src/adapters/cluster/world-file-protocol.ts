/**
 * What passes between the service and a file Job's pod: the operation as argv (values as separate
 * entries, never a shell's text), a write's content as base64 in chunked environment variables,
 * and the result as marked lines of JSON on stdout, read back from the pod's log (stdout and
 * stderr are merged there, hence the marker). The JSON is cut into numbered lines of 8 KiB: a
 * container runtime splits a longer line into partial records, and the result must not depend on
 * how the log's reader joins them.
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
/** The prefix of the result lines (`<marker><n>/<count> <json part>`); anything else is the process's own noise. */
export const RESULT_MARKER = 'FELIS_FILES_RESULT ';
const RESULT_PART_CHARS = 8 * 1024;

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

/** The result as numbered marked lines, each short enough for any container runtime to keep whole. */
export function resultLines(result: FileResult): string[] {
  const json = JSON.stringify(result);
  const count = Math.max(1, Math.ceil(json.length / RESULT_PART_CHARS));
  return Array.from({ length: count }, (_, i) => `${RESULT_MARKER}${i + 1}/${count} ${json.slice(i * RESULT_PART_CHARS, (i + 1) * RESULT_PART_CHARS)}`);
}

const NUMBERED = /^(\d{1,6})\/(\d{1,6}) (.*)$/s;

/** The last complete result among a log's lines, checked; undefined when there is none. */
export function resultOf(lines: Iterable<string>): FileResult | undefined {
  let found: FileResult | undefined;
  let parts: string[] = [];
  for (const line of lines) {
    const numbered = line.startsWith(RESULT_MARKER) ? NUMBERED.exec(line.slice(RESULT_MARKER.length)) : null;
    if (!numbered) continue;
    const [index, count] = [Number(numbered[1]), Number(numbered[2])];
    // A part out of order starts over: only an unbroken 1..count run is a result.
    parts = index === parts.length + 1 ? [...parts, numbered[3]!] : index === 1 ? [numbered[3]!] : [];
    if (parts.length !== count) continue;
    try {
      const parsed = fileResultSchema.safeParse(JSON.parse(parts.join('')));
      if (parsed.success) found = parsed.data;
    } catch {
      // a garbled result: not one
    }
    parts = [];
  }
  return found;
}
