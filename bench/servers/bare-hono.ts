import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { announce, isBun } from './announce.js';

/** Baseline 2: one bare Hono route on the adapter the service uses (node-server, or Bun.serve). */
const app = new Hono();
app.get('/healthz', (c) => c.json({ status: 'ok' }));

declare const Bun: { serve(options: { fetch: typeof app.fetch; port: number; hostname: string }): { port: number } };

if (isBun) {
  announce({ port: Bun.serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }).port });
} else {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => announce({ port: info.port }));
  void server;
}
