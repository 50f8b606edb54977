/** Each bench server prints one JSON line with its port(s) on stdout, then stays quiet there. */
export function announce(ports: Record<string, number>): void {
  process.stdout.write(`${JSON.stringify({ ready: true, runtime: process.versions.bun ? 'bun' : 'node', ...ports })}\n`);
}

export const isBun = typeof process.versions.bun === 'string';
