import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS } from '../helpers/app.js';
import { BUN, spawnService, type ServiceProcess } from '../helpers/process.js';
import { RawConnection, javaClientRequest } from '../helpers/raw-http.js';
import { SERVICE_VERSION } from '../../src/version.js';

/** The same sources and apps under Bun (`npx bun src/main.ts`), probed from outside over TCP. */
describe('under Bun', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await spawnService(BUN, ['src/main.ts']);
  }, 60_000);
  afterAll(() => service?.kill());

  it('answers the health probe on both faces', async () => {
    for (const port of [service.internalPort, service.externalPort]) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', version: SERVICE_VERSION });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
    expect(service.lines.find((l) => l.msg === 'listening')).toMatchObject({ database: 'pglite' });
  });

  it("answers the proxy's Java client headers as plain HTTP/1.1", async () => {
    const port = service.internalPort;
    const conn = await RawConnection.open(port);
    try {
      for (const path of ['/healthz', '/readyz']) {
        await conn.write(javaClientRequest({ method: 'GET', path, port, token: TOKENS.proxy }));
        const res = await conn.readResponse();
        expect(res.statusLine).toBe('HTTP/1.1 200 OK');
        expect(res.headers.upgrade).toBeUndefined();
      }
    } finally {
      conn.close();
    }
  });

  it('serves the envelope, 405 Allow, the request id rule, HSTS and metrics', async () => {
    const base = `http://127.0.0.1:${service.internalPort}`;
    const notFound = await fetch(`${base}/nope`, { headers: { 'X-Request-Id': 'bun-trace-1' } });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ error: { code: 'not_found', request_id: 'bun-trace-1' } });
    const notAllowed = await fetch(`${base}/healthz`, { method: 'DELETE' });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.get('allow')).toBe('GET, HEAD');
    const viaTls = await fetch(`${base}/healthz`, { headers: { 'X-Forwarded-Proto': 'https', 'X-Request-Id': 'bad id!' } });
    expect(viaTls.headers.get('strict-transport-security')).toMatch(/^max-age=/);
    expect(viaTls.headers.get('x-request-id')).not.toBe('bad id!');
    const crossSite = await fetch(`${base}/healthz`, { method: 'POST', headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const metrics = await fetch(`${base}/metrics`);
    expect(await metrics.text()).toContain('felis_http_requests_total{face="internal",method="GET",route="/healthz",status="200"}');
  });

  it('exits 0 on SIGTERM with a kept-alive connection open', async () => {
    const conn = await RawConnection.open(service.internalPort);
    await conn.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect((await conn.readResponse()).status).toBe(200);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    await conn.whenClosed();
    expect(service.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
    expect(service.stderr()).toBe('');
  });
});
