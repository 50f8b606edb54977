import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, TOKENS, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { javaClientRequest, RawConnection, type RawResponse } from '../../../test/helpers/raw-http.js';
import { randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { opLoginRequests } from '../../db/schema/op-login.js';
import { serve, type Listening } from '../../runtime/serve.js';

/**
 * The original proxy's and lobby's clients (FelisApiClient, LinkClient) replayed byte for byte as
 * their Java 17 HTTP client writes them (DESIGN.md, "The real clients"): h2c upgrade offer,
 * Content-Length 0 on GETs, bodies built by string concatenation, dashed lowercase UUIDs. Each
 * internal route of linking, reclaim, migration and op-login, on one kept-alive connection.
 */
describe("the original proxy client's requests to the identity routes", () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let listening: Listening;
  let conn: RawConnection;

  beforeAll(async () => {
    deps = createTestDeps(database());
    listening = await serve({ fetch: createTestApps(deps).internal.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    conn = await RawConnection.open(listening.port);
  });
  afterAll(async () => {
    conn?.close();
    await listening?.close(100);
  });

  async function send(method: 'GET' | 'POST', path: string, body?: string, caller: 'proxy' | 'limbo' = 'proxy') {
    await conn.write(javaClientRequest({ method, path, port: listening.port, token: TOKENS[caller], body }));
    const res = await conn.readResponse();
    expect(res.headers.upgrade).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return { ...res, json: JSON.parse(res.body) as Record<string, unknown> };
  }

  const envelopeCode = (res: RawResponse & { json: Record<string, unknown> }) => {
    const error = res.json.error as { code: string; request_id: string };
    expect(error.request_id).toBe(res.headers['x-request-id']);
    return error.code;
  };

  it('link code (LinkClient), link status and the blacklist (FelisApiClient) as the proxy and the lobby send them', async () => {
    const player = randomMcUuid();
    for (const caller of ['proxy', 'limbo'] as const) {
      const code = await send('POST', '/api/v1/internal/account/link/code', `{"mc_uuid":"${player}"}`, caller);
      expect(code.statusLine).toBe('HTTP/1.1 201 Created');
      expect(code.json).toEqual({ code: expect.stringMatching(/^[A-HJKMNP-Z2-9]{8}$/), expires_at: expect.any(String), panel_url: 'https://panel.felis.test/' });

      const status = await send('GET', `/api/v1/internal/account/link/status/${player}`, undefined, caller);
      expect(status.status).toBe(200);
      expect(status.json).toEqual({ linked: false });

      const barred = await send('GET', `/api/v1/internal/player/blacklist/${player}`, undefined, caller);
      expect(barred.status).toBe(200);
      expect(barred.json).toEqual({ blacklisted: false });
    }
  });

  it('reclaim, then the gate reads the bar; a staff UUID gets the protected_admin envelope', async () => {
    const squatter = randomMcUuid();
    const res = await send('POST', '/api/v1/internal/player/reclaim', `{"squatter_uuid":"${squatter}","username":"Notch","data_ref":"s3://holds/notch"}`);
    expect(res.statusLine).toBe('HTTP/1.1 200 OK');
    expect(res.json).toEqual({ blacklisted: true, username: 'Notch', hold_expires_at: expect.any(String) });
    expect((await send('GET', `/api/v1/internal/player/blacklist/${squatter}`, undefined, 'limbo')).json).toEqual({ blacklisted: true });

    const admin = await createUser(deps, { role: 'admin' });
    const adminUuid = randomMcUuid();
    await linkAccount(deps, { userId: admin.id, mcUuid: adminUuid });
    const refused = await send('POST', '/api/v1/internal/player/reclaim', `{"squatter_uuid":"${adminUuid}","username":"Op"}`);
    expect(refused.status).toBe(409);
    expect(envelopeCode(refused)).toBe('protected_admin');
  });

  it('migrate start: 201 with started=true for a linked player, the not_linked envelope otherwise', async () => {
    const user = await createUser(deps);
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: user.id, mcUuid });
    const started = await send('POST', '/api/v1/internal/account/migrate/start', `{"mc_uuid":"${mcUuid}"}`);
    expect(started.statusLine).toBe('HTTP/1.1 201 Created');
    expect(started.json).toEqual({ started: true, state: 'initiated' });
    const unlinked = await send('POST', '/api/v1/internal/account/migrate/start', `{"mc_uuid":"${randomMcUuid()}"}`);
    expect(unlinked.status).toBe(404);
    expect(envelopeCode(unlinked)).toBe('not_linked');
  });

  it('op-login pending, show (percent-encoded id, approver in the query) and approve (typed name as a JSON string)', async () => {
    const owner = await createUser(deps, { role: 'owner' });
    const approverUuid = randomMcUuid();
    await linkAccount(deps, { userId: owner.id, mcUuid: approverUuid });
    const staff = await createUser(deps, { role: 'admin', email: 'Op@Example.NET', emailVerified: true, username: 'op' });
    const now = deps.clock.now();
    const id = '0123456789abcdef0123456789abcdef';
    await deps.database.db.insert(opLoginRequests).values({
      id,
      userId: staff.id,
      email: 'Op@Example.NET',
      clientIp: '203.0.113.9',
      userAgent: 'Firefox/140.0',
      status: 'pending',
      codeHash: 'x',
      createdAt: now,
      expiresAt: new Date(now.getTime() + 600_000),
    });

    const pending = await send('GET', '/api/v1/internal/op-login/pending');
    expect(pending.status).toBe(200);
    expect(pending.json).toEqual({
      pending: [{ request_id: id, username: 'op', email: 'Op@Example.NET', client_ip: '203.0.113.9', created_at: now.toISOString() }],
    });

    const shown = await send('GET', `/api/v1/internal/op-login/${id}?approver_uuid=${approverUuid}`);
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({
      request_id: id,
      username: 'op',
      email: 'Op@Example.NET',
      client_ip: '203.0.113.9',
      user_agent: 'Firefox/140.0',
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 600_000).toISOString(),
    });
    const encoded = await send('GET', `/api/v1/internal/op-login/a%2Fb?approver_uuid=${approverUuid}`);
    expect(encoded.status).toBe(404);
    expect(envelopeCode(encoded)).toBe('op_login_not_found');

    const mismatch = await send('POST', `/api/v1/internal/op-login/${id}/approve`, `{"approver_uuid":"${approverUuid}","username":"o\\"p\\\\"}`);
    expect(mismatch.status).toBe(409);
    expect(envelopeCode(mismatch)).toBe('op_login_mismatch');

    const approved = await send('POST', `/api/v1/internal/op-login/${id}/approve`, `{"approver_uuid":"${approverUuid}","username":"OP"}`);
    expect(approved.statusLine).toBe('HTTP/1.1 200 OK');
    expect(approved.json).toEqual({ approved: true, username: 'op', email: 'Op@Example.NET' });

    const notAdmin = await send('POST', `/api/v1/internal/op-login/${id}/approve`, `{"approver_uuid":"${randomMcUuid()}","username":"op"}`);
    expect(notAdmin.status).toBe(403);
    expect(envelopeCode(notAdmin)).toBe('not_admin');
    expect(conn.closed).toBe(false);
  });
});
