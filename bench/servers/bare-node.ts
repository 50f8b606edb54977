import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce } from './announce.js';

/** Baseline 1: the least a JSON answer can cost on this runtime's node:http. */
const body = JSON.stringify({ status: 'ok' });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => announce({ port: (server.address() as AddressInfo).port }));
