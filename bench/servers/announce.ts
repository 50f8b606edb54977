import type { ChildProcess } from 'node:child_process';

/** Each bench server prints one JSON line with its port(s) on stdout, then stays quiet there. */
export function announce(ports: Record<string, number>): void {
  process.stdout.write(`${JSON.stringify({ ready: true, runtime: process.versions.bun ? 'bun' : 'node', ...ports })}\n`);
}

export const isBun = typeof process.versions.bun === 'string';

/** The port a child bench server announced; rejects if it exits first (`what` names it then). */
export function announcedPort(child: ChildProcess, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      const newline = pending.indexOf('\n');
      if (newline >= 0) resolve((JSON.parse(pending.slice(0, newline)) as { port: number }).port);
    });
    child.once('exit', (code, signal) => reject(new Error(`${what} exited (${signal ?? code}) before it was listening`)));
  });
}
