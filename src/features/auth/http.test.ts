import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { serve, type Listening } from '../../runtime/serve.js';
import { hashPassword } from './password.js';

interface Answer {
  status: number;
  setCookie: string[];
  body: string;
}

/**
 * A raw HTTP/1.1 request with an explicit Host header (fetch forbids setting Host), so the
 * session's host binding is exercised over a real socket, peer address included.
 */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: body ? { ...headers, 'Content-Length': Buffer.byteLength(body) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, setCookie: res.headers['set-cookie'] ?? [], body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('sign-in over a real socket', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let server: Listening;
  beforeAll(async () => {
    deps = createTestDeps(database());
    server = await serve({ fetch: createTestApps(deps).external.fetch, port: 0, host: '127.0.0.1', log: deps.log });
  });
  afterAll(async () => {
    await server.close(100);
  });

  it('sets the cookie with a real Set-Cookie header, records the TCP peer, and binds the session to its host', async () => {
    const user = await createUser(deps, { passwordHash: await hashPassword('correct horse battery') });
    const json = { 'Content-Type': 'application/json' };
    const login = await send(
      server.port,
      'POST',
      '/api/v1/auth/login',
      { ...json, Host: 'panel.felis.test', 'User-Agent': 'real-socket' },
      JSON.stringify({ username: user.username, password: 'correct horse battery' }),
    );
    expect(login.status).toBe(200);
    expect(login.setCookie).toHaveLength(2);
    const [pair, ...attributes] = login.setCookie[0]!.split('; ');
    expect(pair).toMatch(/^svc_session=[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(['Max-Age=2592000', 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Lax']);
    // The device cookie (the sign-in's lane of known clients): a year, the same attributes.
    const [device, ...deviceAttributes] = login.setCookie[1]!.split('; ');
    expect(device).toMatch(/^svc_device=[A-Za-z0-9_-]{43}$/);
    expect(deviceAttributes).toEqual(['Max-Age=31536000', 'Path=/', 'HttpOnly', 'Secure', 'SameSite=Lax']);
    expect(login.setCookie.join('\n')).not.toMatch(/Domain=/i);

    const sessions = await send(server.port, 'GET', '/api/v1/account/sessions', { Host: 'panel.felis.test:8443', Cookie: pair! });
    expect(sessions.status).toBe(200);
    const list = JSON.parse(sessions.body) as { sessions: Array<{ client_ip: string; user_agent: string; current: boolean }> };
    expect(list.sessions[0]).toMatchObject({ client_ip: '127.0.0.1', user_agent: 'real-socket', current: true });

    const elsewhere = await send(server.port, 'GET', '/api/v1/me', { Host: 'console.felis.test', Cookie: pair! });
    expect(elsewhere.status).toBe(401);

    const out = await send(server.port, 'POST', '/api/v1/auth/logout', { Host: 'panel.felis.test', Cookie: pair! });
    expect(out.status).toBe(200);
    expect(out.setCookie[0]).toMatch(/^svc_session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Lax/);
    expect((await send(server.port, 'GET', '/api/v1/me', { Host: 'panel.felis.test', Cookie: pair! })).status).toBe(401);
  });
});
