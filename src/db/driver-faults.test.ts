import { connect, createServer, type Server, type Socket } from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDriverTypeFetchFailure } from './driver-faults.js';

/** The machine's PostgreSQL (every machine here has one; the PostgreSQL run names it). */
const TARGET = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');

/**
 * A TCP relay in front of the real server that drops both sides the first time a client sends the
 * driver's array-type query (a server going away just as a connection opened), then relays.
 */
async function droppingRelay(): Promise<{ server: Server; port: number }> {
  let dropped = false;
  const server = createServer((client: Socket) => {
    const upstream = connect(Number(TARGET.port || 5432), TARGET.hostname);
    client.on('data', (chunk) => {
      if (!dropped && chunk.includes('typarray')) {
        dropped = true;
        // A reset, as the suite saw it (read ECONNRESET), not a polite close.
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

describe('the database driver\'s uncatchable rejection', () => {
  let relay: { server: Server; port: number };
  beforeAll(async () => {
    relay = await droppingRelay();
  });
  afterAll(() => new Promise<void>((resolve) => relay.server.close(() => resolve())));

  it('is what postgres-js leaves when a connection drops during its type fetch, and is recognised', async () => {
    const seen: unknown[] = [];
    const onRejection = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', onRejection);
    const url = new URL(TARGET);
    url.host = `127.0.0.1:${relay.port}`;
    const sql = postgres(url.toString(), { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      // The query the connection was opened for settles by itself (the driver reconnects; its
      // answer is the driver's affair, porsager/postgres#1223): the caller sees that.
      await sql`select 1`.catch(() => undefined);
      await expect.poll(() => seen.length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(seen.every(isDriverTypeFetchFailure)).toBe(true);
    } finally {
      process.off('unhandledRejection', onRejection);
      await sql.end({ timeout: 0 });
    }
  });

  it('is told apart from any other rejection', () => {
    expect(isDriverTypeFetchFailure(new Error('boom'))).toBe(false);
    expect(isDriverTypeFetchFailure(Object.assign(new Error('x'), { query: 'select 1' }))).toBe(false);
    expect(isDriverTypeFetchFailure(undefined)).toBe(false);
    expect(isDriverTypeFetchFailure('select b.oid, b.typarray from pg_catalog.pg_type')).toBe(false);
  });
});
