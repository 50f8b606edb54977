import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
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
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
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
