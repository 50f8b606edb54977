import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, TOKENS } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { SessionStandIn } from '../../../test/helpers/session-stand-in.js';
import { serve, type Listening } from '../../runtime/serve.js';
import { createSessionVerifier, type SessionVerifier } from './service.js';

const NOTCH_ID = '069a79f444e94726a5befca90e38aaf5';
const QUERY = '/session/minecraft/hasJoined?username=Notch&serverId=4ed1f46bbe04bc756bcb17c0c7ce3e4632f06a48&ip=203.0.113.7';

/** Writes raw bytes on a fresh TCP connection; resolves with everything read until the server closes it. */
function exchange(port: number, bytes: string, keepOpenMs = 1500): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedByServer: false });
    }, keepOpenMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => {
      clearTimeout(timer);
      resolve({ text, closedByServer: true });
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('hasJoined on a real socket', () => {
  const database = useTestDatabase();
  let standIn: SessionStandIn;
  let verifier: SessionVerifier;
  let server: Listening;

  beforeAll(async () => {
    standIn = await SessionStandIn.start();
    standIn.behaviour = { kind: 'profile', body: { id: NOTCH_ID, name: 'Notch', properties: [] } };
    const deps = createTestDeps(database(), {
      env: { SESSION_SOURCES: JSON.stringify([{ name: 'mojang', url: standIn.url, primary: true }]) },
    });
    verifier = createSessionVerifier(deps);
    deps.sessionVerifier = verifier;
    const { internal } = createTestApps(deps);
    server = await serve({ fetch: internal.fetch, port: 0, host: '127.0.0.1', log: deps.log });
  });

  afterAll(async () => {
    await server?.close(100);
    verifier?.close();
    await standIn?.close();
  });

  it("answers 200 to the proxy's Java client headers, Content-Length: 0 and the h2c offer included", async () => {
    const request = [
      `GET ${QUERY} HTTP/1.1`,
      'Connection: Upgrade, HTTP2-Settings',
      'Content-Length: 0',
      `Host: 127.0.0.1:${server.port}`,
      'HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA',
      'Upgrade: h2c',
      'User-Agent: Java-http-client/17.0.9',
      'Accept: application/json',
      `Authorization: Bearer ${TOKENS.proxy}`,
      '',
      '',
    ].join('\r\n');
    const { text } = await exchange(server.port, request, 500);
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text).toContain(`"id":"${NOTCH_ID}"`);
  });

  it('answers 400 with no body to a GET that declares one, and closes the connection', async () => {
    const asked = standIn.requests.length;
    const request = [`GET ${QUERY} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, 'Content-Length: 5', '', 'hello'].join('\r\n');
    const { text, closedByServer } = await exchange(server.port, request);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(text.toLowerCase()).toContain('content-length: 0\r\n');
    expect(text.split('\r\n\r\n')[1]).toBe('');
    expect(closedByServer).toBe(true);
    expect(standIn.requests.length).toBe(asked);
  });

  it('answers 503 and 204 with no body at all', async () => {
    const get = [`GET ${QUERY} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, 'Connection: close', '', ''].join('\r\n');
    const saved = standIn.behaviour;
    try {
      standIn.behaviour = { kind: 'status', status: 502 };
      const failed = await exchange(server.port, get);
      expect(failed.text).toMatch(/^HTTP\/1\.1 503 /);
      expect(failed.text.toLowerCase()).toContain('content-length: 0\r\n');
      expect(failed.text.toLowerCase()).not.toContain('transfer-encoding');
      expect(failed.text.split('\r\n\r\n')[1]).toBe('');
      standIn.behaviour = { kind: 'no-content' };
      const refused = await exchange(server.port, get);
      expect(refused.text).toMatch(/^HTTP\/1\.1 204 /);
      expect(refused.text.split('\r\n\r\n')[1]).toBe('');
    } finally {
      standIn.behaviour = saved;
    }
  });

  it('answers 400 to a chunked GET too', async () => {
    const request = [
      `GET ${QUERY} HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      'Transfer-Encoding: chunked',
      '',
      '5',
      'hello',
      '0',
      '',
      '',
    ].join('\r\n');
    const { text, closedByServer } = await exchange(server.port, request);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(closedByServer).toBe(true);
  });
});
