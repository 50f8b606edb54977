/**
 * The server under test for bench/has-joined.ts, run in its own process so that nothing else
 * (stand-in sources, load client) shares its event loop. Started by that bench, not by hand:
 *
 *   has-joined-target.ts floor <source url>            bare node:http keep-alive forwarder
 *   has-joined-target.ts service <SESSION_SOURCES json>  the full service (startService)
 *
 * The service reads BENCH_DATABASE_URL (default memory:) and BENCH_LOG_LEVEL (default silent; any
 * other level writes the log lines to /dev/null, synchronously as the default pino destination does).
 * Prints one line {"port": N} on stdout once listening, stops and exits 0 on SIGTERM.
 */
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';

const [role, setting] = process.argv.slice(2);
if ((role !== 'floor' && role !== 'service') || !setting) {
  process.stderr.write('usage: has-joined-target.ts floor <source url> | service <SESSION_SOURCES json>\n');
  process.exit(2);
}

/**
 * Forwards every request to the source with a keep-alive client and copies the answer. Whatever it
 * adds is the extra loopback hop itself, on this machine, in this run.
 */
async function bareForwarder(source: string): Promise<{ port: number; stop: () => Promise<void> }> {
  const upstream = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    request(`${source}${req.url ?? '/'}`, { agent: upstream }, (up) => {
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => res.writeHead(up.statusCode ?? 502, { 'Content-Type': 'application/json' }).end(Buffer.concat(chunks)));
    }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      upstream.destroy();
    },
  };
}

async function service(sessionSources: string): Promise<{ port: number; stop: () => Promise<void> }> {
  // Loaded here, not at the top, so the floor process carries none of the service's modules.
  const [{ pino }, { loadConfig }, { createLogger }, { startService }] = await Promise.all([
    import('pino'),
    import('../src/config.js'),
    import('../src/lib/logger.js'),
    import('../src/service.js'),
  ]);
  const level = process.env.BENCH_LOG_LEVEL || 'silent';
  const config = loadConfig({
    INTERNAL_PORT: '0',
    EXTERNAL_PORT: '0',
    DATABASE_URL: process.env.BENCH_DATABASE_URL || 'memory:',
    LOG_LEVEL: level,
    SESSION_SOURCES: sessionSources,
  });
  const log = level === 'silent' ? createLogger('silent') : createLogger(level, pino.destination({ dest: '/dev/null', sync: true }));
  const running = await startService(config, log);
  return { port: running.internal.port, stop: running.stop };
}

const target = role === 'floor' ? await bareForwarder(setting) : await service(setting);
process.once('SIGTERM', () => {
  target.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`has-joined-target ${role}: stop failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
});
process.stdout.write(`${JSON.stringify({ port: target.port })}\n`);
