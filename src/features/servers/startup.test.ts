import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { images } from '../../db/schema/images.js';
import { startService } from '../../service.js';
import { TEST_ENV, TOKENS } from '../../../test/helpers/app.js';
import { CONTRACT_HEADERS } from '../../../test/helpers/fixture-routes.js';
import { captureLog } from '../../../test/helpers/log.js';
import type { ServerInfo } from './core/schema.js';

describe('start-up of an embedded install', () => {
  it('whitelists the platform default image, provisions the system servers and serves the proxy over HTTP', { timeout: 60_000 }, async () => {
    const config = loadConfig({ ...TEST_ENV, INTERNAL_PORT: '0', EXTERNAL_PORT: '0', DEFAULT_IMAGE: 'example/default:7' } as NodeJS.ProcessEnv);
    const service = await startService(config, captureLog('info').log);
    try {
      const base = `http://127.0.0.1:${service.internal.port}`;
      const res = await fetch(`${base}/api/v1/servers`, { headers: { Authorization: `Bearer ${TOKENS.proxy}` } });
      expect(res.status).toBe(200);
      const { servers } = (await res.json()) as { servers: ServerInfo[] };
      expect(servers.map((s) => s.name).sort()).toEqual(['lobby', 'login']);
      expect(servers.every((s) => s.idleStopSeconds === 0)).toBe(true);
      // Over a real Node server the front door writes the contract headers on the Node response.
      for (const [path, status, headers] of [
        ['/api/v1/servers', 200, { Authorization: `Bearer ${TOKENS.proxy}`, 'X-Request-Id': 'over-http-1' }],
        ['/api/v1/servers', 401, { 'X-Forwarded-Proto': 'https' }],
        ['/nowhere', 404, {}],
      ] as const) {
        const answer = await fetch(`${base}${path}`, { headers });
        expect(answer.status).toBe(status);
        for (const [name, value] of Object.entries(CONTRACT_HEADERS)) expect(answer.headers.get(name), `${path} ${name}`).toBe(value);
        expect(answer.headers.get('strict-transport-security')).toBe(
          'X-Forwarded-Proto' in headers ? 'max-age=63072000; includeSubDomains' : null,
        );
        const requestId = answer.headers.get('x-request-id');
        if ('X-Request-Id' in headers) expect(requestId).toBe(headers['X-Request-Id']);
        else expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
        if (status !== 200) expect(((await answer.json()) as { error: { request_id: string } }).error.request_id).toBe(requestId);
        else await answer.arrayBuffer();
      }
      const lobby = await fetch(`${base}/api/v1/internal/servers/lobby/status`, { headers: { Authorization: `Bearer ${TOKENS.proxy}` } });
      expect(lobby.status).toBe(404);
      const { db } = service.deps.database;
      const rows = await db.select().from(images);
      expect(rows).toEqual([expect.objectContaining({ imageRef: 'example/default:7', source: 'platform', enabled: true })]);
    } finally {
      await service.stop();
    }
  });
});
