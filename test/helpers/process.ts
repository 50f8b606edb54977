import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { TEST_ENV } from './app.js';

export const BUN = 'node_modules/.bin/bun';

export interface ServiceProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** The parsed JSON log lines written so far. */
  lines: Array<Record<string, unknown>>;
  stderr(): string;
  internalPort: number;
  externalPort: number;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  kill(): void;
}

/**
 * Starts `src/main.ts` as the README does (`command` is node with tsx, or bun), on port 0 for both
 * faces, and resolves once its `listening` line names the ports.
 */
export async function spawnService(command: string, args: string[], env: Record<string, string> = {}): Promise<ServiceProcess> {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, ...TEST_ENV, EXTERNAL_PORT: '0', INTERNAL_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close', not 'exit': a process's last lines may still be in its stdout pipe when 'exit' fires,
  // and a test that reads `lines` after `exited` must see them (the 'stopped' line was lost so).
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      const parts = pending.split('\n');
      pending = parts.pop()!;
      for (const part of parts) {
        const line = JSON.parse(part) as Record<string, unknown>;
        lines.push(line);
        if (line.msg === 'listening') resolve(line);
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
  });
  try {
    const ready = await listening;
    return {
      child,
      lines,
      stderr: () => stderr,
      internalPort: ready.internal_port as number,
      externalPort: ready.external_port as number,
      exited,
      kill: () => child.kill('SIGKILL'),
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The container image's layout without a Docker engine, built once per run on first demand and
 * shared by the files that run the built service as a process: `npm run build`'s output in dist/,
 * with drizzle/ and package.json beside it as the Dockerfile's runtime stage copies them and
 * node_modules linked. Answers the folder (run `node <folder>/dist/main.js`).
 *
 * The build is tsc with tsconfig.build.json and --noCheck: with isolatedModules and
 * verbatimModuleSyntax each file's output does not depend on the type check (the same bytes as
 * `npm run build`), which `npm run typecheck` does for the same sources; the check was most of a
 * build's time. One process builds (an exclusive lock folder), any other waits for its outcome.
 */
export async function builtImage(): Promise<string> {
  const image = inject('imageDir');
  if (!image) throw new Error("builtImage(): the folder comes from the run's global setup (test/global-setup.ts)");
  const ready = `${image}.ready`;
  const failed = `${image}.failed`;
  let building = false;
  if (!existsSync(ready)) {
    try {
      mkdirSync(`${image}.lock`);
      building = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  if (building) {
    try {
      await promisify(execFile)(
        process.execPath,
        [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--noCheck', '--outDir', join(image, 'dist')],
        { cwd: ROOT },
      );
      cpSync(join(ROOT, 'drizzle'), join(image, 'drizzle'), { recursive: true });
      cpSync(join(ROOT, 'package.json'), join(image, 'package.json'));
      symlinkSync(join(ROOT, 'node_modules'), join(image, 'node_modules'));
    } catch (err) {
      const { stdout = '', message } = err as Error & { stdout?: string };
      writeFileSync(failed, `${message}\n${stdout}`);
      throw err;
    }
    writeFileSync(ready, '');
  }
  // Another file is building it: wait on the outcome (a build takes seconds, more on a loaded machine).
  while (!existsSync(ready)) {
    if (existsSync(failed)) throw new Error(`the image build failed: ${readFileSync(failed, 'utf8')}`);
    await sleep(100);
  }
  return image;
}
