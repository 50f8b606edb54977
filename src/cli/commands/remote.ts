/**
 * What the verbs that talk to a running service share: their common options (`--url`, `--key`,
 * `--json`), how they print, and waiting for a server or a job with progress on stderr.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ApiError, apiTarget, callApi, opsTarget, type ApiTarget } from '../api.js';
import { UsageError } from '../command.js';

export const OPS_USAGE = [
  'It uses the operator\'s door, not an API key (a key never reaches what staff alone may do):',
  '  SERVICE_TOKEN_OPS      the ops token, the same setting the service reads',
  '  --internal-url URL     the internal face (FELIS_INTERNAL_URL; default http://127.0.0.1:INTERNAL_PORT, 8081)',
  '  --json                 print the API\'s answer as JSON',
].join('\n');

export const REMOTE_USAGE = [
  'Options every such verb takes:',
  '  --url URL      the panel address (FELIS_URL; default http://panel.localhost:8080)',
  '  --key KEY      an API key, felis_… (FELIS_API_KEY; the environment keeps it out of the shell history)',
  '  --json         print the API\'s answer as JSON (for scripts); progress still goes to stderr',
].join('\n');

/** Server names as the API takes them; checked here so a typo never becomes a path. */
const SERVER_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export interface RemoteCall {
  target: ApiTarget;
  json: boolean;
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** The arguments of a remote verb: its own options besides the shared ones, and its words. */
export function parseRemote(args: string[], options: ParseArgsConfig['options'] = {}, positionals = 0, door: 'key' | 'ops' = 'key'): RemoteCall {
  let parsed;
  const doorOptions: ParseArgsConfig['options'] = door === 'key' ? { url: { type: 'string' }, key: { type: 'string' } } : { 'internal-url': { type: 'string' } };
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { ...doorOptions, json: { type: 'boolean' }, ...options },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(positionals === 0 ? `unexpected argument: ${parsed.positionals[0]}` : `expected ${positionals} argument(s), got ${parsed.positionals.length}`);
  }
  const values = parsed.values as RemoteCall['values'];
  return {
    target:
      door === 'key'
        ? apiTarget({ url: values.url as string | undefined, key: values.key as string | undefined })
        : opsTarget({ url: values['internal-url'] as string | undefined }),
    json: values.json === true,
    positionals: parsed.positionals,
    values,
  };
}

export function serverName(word: string | undefined): string {
  if (!word || !SERVER_NAME.test(word)) throw new UsageError(`not a server name: ${word ?? '(none)'} (lower-case letters, digits and -)`);
  return word;
}

/** Seconds from an option, within bounds. */
export function seconds(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 86_400) throw new UsageError(`--timeout takes whole seconds from 1 to 86400, not ${String(value)}`);
  return n;
}

export const out = (text: string) => process.stdout.write(`${text}\n`);
export const progress = (text: string) => process.stderr.write(`${text}\n`);

/** Runs a remote verb: an API error is one line on stderr and exit code 1. */
export async function remote(run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError) {
      process.stderr.write(`${err.describe()}\n`);
      return err.status === 401 ? 3 : 1;
    }
    throw err;
  }
}

/** A table of rows for the terminal: columns padded to their widest cell. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * Asks `look` once a second until it says done or the time is up; prints each new state it
 * reports (progress) and the time it took. A time-out is exit code 1, with the last state named.
 */
export async function waitFor<T>(
  what: string,
  timeoutSeconds: number,
  look: () => Promise<{ done: boolean; failed?: string; state: string; value: T }>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<T> {
  const started = Date.now();
  let last = '';
  for (;;) {
    const seen = await look();
    if (seen.state !== last) {
      progress(`${what}: ${seen.state} (${Math.round((Date.now() - started) / 1000)} s)`);
      last = seen.state;
    }
    if (seen.failed) throw new Error(`felis: ${what} failed: ${seen.failed}`);
    if (seen.done) return seen.value;
    if (Date.now() - started > timeoutSeconds * 1000) {
      throw new Error(`felis: ${what} did not finish within ${timeoutSeconds} s (last seen: ${seen.state}); it goes on in the service`);
    }
    await sleep(1000);
  }
}

export { callApi };
