import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../global-setup.js';
import { builtImage, spawnService, type ServiceProcess } from '../helpers/process.js';

const template = inject('postgresTemplate');

/**
 * A relay in front of the run's PostgreSQL that resets the connection the first `times` times a
 * client sends postgres-js's array-type query: a database restarting or failing over just as the
 * service's connections open.
 */
async function resettingRelay(target: URL, times: number): Promise<{ server: Server; port: number; resets: () => number }> {
  let resets = 0;
  const server = createServer((client: Socket) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    client.on('data', (chunk) => {
      if (resets < times && chunk.includes('typarray')) {
        resets += 1;
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, resets: () => resets };
}

/**
 * postgres-js drops the promise of its array-type query (porsager/postgres#1192), so a connection
 * reset during it is an unhandled rejection: before src/main.ts logged it, the first one ended the
 * process ("read ECONNRESET", exit 1). The built service, as the image runs it, on a PostgreSQL
 * that resets three connections as they open.
 */
describe.runIf(template)('a database connection reset as it opens', () => {
  const name = `felis_reset_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'felis-reset-'));
  let relay: Awaited<ReturnType<typeof resettingRelay>>;
  let service: ServiceProcess | undefined;
  let admin: postgres.Sql;

  beforeAll(async () => {
    admin = postgres(template!.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}" template "${template!.database}"`);
    relay = await resettingRelay(new URL(template!.url), 3);
  }, 60_000);

  afterAll(async () => {
    service?.kill();
    await service?.exited;
    await new Promise<void>((resolve) => relay.server.close(() => resolve()));
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end({ timeout: 1 });
    rmSync(dir, { recursive: true, force: true });
  });

  it('is logged, and the service starts, serves and stops as usual', { timeout: 120_000 }, async () => {
    const url = new URL(withDatabase(template!.url, name));
    url.host = `127.0.0.1:${relay.port}`;
    service = await spawnService(process.execPath, [join(await builtImage(), 'dist/main.js')], { DATABASE_URL: url.toString(), DATA_DIR: dir });
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${service!.internalPort}/readyz`)).status, { timeout: 60_000, interval: 250 }).toBe(200);
    expect(relay.resets()).toBeGreaterThan(0);
    const logged = service.lines.filter((line) => line.msg === 'a database connection failed as it opened');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.every((line) => line.level === 'warn' && line.dependency === 'database')).toBe(true);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    service = undefined;
  });
});
