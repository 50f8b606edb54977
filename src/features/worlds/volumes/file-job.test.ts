import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../../../test/helpers/worlds.js';
import { CONTENT_PARTS_ENV, resultOf } from '../../../adapters/cluster/world-file-protocol.js';
import { runFilesCommand } from './file-job.js';

const run = promisify(execFile);
const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

describe('the CLI\'s files subcommand', () => {
  const tempDir = useTempDir();

  async function runCli(argv: string[], env: NodeJS.ProcessEnv = {}) {
    const lines: string[] = [];
    const code = await runFilesCommand(argv, env, (l) => void lines.push(l), () => {});
    return { code, result: resultOf(lines) };
  }

  it('confines paths in the pod too, and refuses bad arguments with exit 2', async () => {
    const folder = tempDir();
    expect(await runCli(['read', '--folder', folder, '--path', '../etc/passwd'])).toEqual({ code: 1, result: { ok: false, code: 'bad_path', message: expect.any(String) } });
    expect((await runCli(['chmod', '--folder', folder, '--path', 'a'])).code).toBe(2);
    expect((await runCli(['read', '--folder', 'relative', '--path', 'a'])).code).toBe(2);
    expect((await runCli(['write', '--folder', folder, '--path', 'a', '--expect-sha256', 'nothex'])).code).toBe(2);
  });

  it('prints a 1 MiB read whole when run as its own process on a pipe, as the Job runs it', async () => {
    const folder = tempDir();
    const bytes = Buffer.alloc(1024 * 1024, 'xyz');
    writeFileSync(join(folder, 'big.bin'), bytes);
    const { stdout } = await run(join('node_modules', '.bin', 'tsx'), ['src/cli/world-job.ts', 'files', 'read', '--folder', folder, '--path', 'big.bin'], {
      env: { PATH: process.env.PATH },
      maxBuffer: 8 * 1024 * 1024,
    });
    expect(resultOf(stdout.split('\n'))).toMatchObject({ ok: true, result: { sha256: sha(bytes), content: bytes.toString('base64') } });
  }, 30_000);

  it('writes the content from its chunks, and fails (not a partial file) when a chunk is missing', async () => {
    const folder = tempDir();
    const env = { [CONTENT_PARTS_ENV]: '2', FELIS_CONTENT_0: b64('hello world').slice(0, 8), FELIS_CONTENT_1: b64('hello world').slice(8) };
    expect(await runCli(['write', '--folder', folder, '--path', 'a.txt', '--create-only'], env)).toMatchObject({ code: 0, result: { ok: true, result: { status: 'created', sha256: sha('hello world') } } });
    expect(readFileSync(join(folder, 'a.txt'), 'utf8')).toBe('hello world');
    expect(await runCli(['write', '--folder', folder, '--path', 'b.txt'], { [CONTENT_PARTS_ENV]: '2', FELIS_CONTENT_0: 'aGk=' })).toMatchObject({ code: 1, result: { ok: false, code: 'failed' } });
    expect(existsSync(join(folder, 'b.txt'))).toBe(false);
  });
});
