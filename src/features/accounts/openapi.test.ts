import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';

describe('OpenAPI document of the accounts and sign-in routes', () => {
  const database = useTestDatabase();

  it('describes every route on the external face with its tier', async () => {
    const { internal } = createTestApps(createTestDeps(database()));
    const res = await internal.request('/openapi/external.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { 'x-felis-tier'?: string }>> };
    const tiers = Object.fromEntries(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op['x-felis-tier']])),
    );
    expect(tiers).toMatchObject({
      'POST /api/v1/auth/options': 'public',
      'POST /api/v1/auth/email/start': 'public',
      'POST /api/v1/auth/email/verify': 'public',
      'POST /api/v1/auth/login': 'public',
      'POST /api/v1/auth/logout': 'public',
      'POST /api/v1/auth/setup/redeem': 'public',
      'GET /api/v1/auth/setup/status': 'app',
      'GET /api/v1/auth/owner-status': 'public',
      'POST /api/v1/account/email': 'app',
      'POST /api/v1/account/sessions/revoke-others': 'app',
      'POST /api/v1/auth/change-password': 'app',
      'GET /api/v1/me': 'app',
      'GET /api/v1/account/sessions': 'app',
      'DELETE /api/v1/account/sessions/{token_hash}': 'app',
      'POST /api/v1/account/email/start': 'app',
      'POST /api/v1/account/email/verify': 'app',
      'GET /api/v1/users': 'admin',
      'POST /api/v1/users': 'admin',
      'GET /api/v1/users/{id}': 'admin',
      'PATCH /api/v1/users/{id}': 'admin',
      'DELETE /api/v1/users/{id}': 'admin',
      'POST /api/v1/users/{id}/disable': 'admin',
      'GET /api/v1/users/{id}/quotas': 'admin',
      'PUT /api/v1/users/{id}/quotas': 'admin',
      'DELETE /api/v1/users/{id}/sessions': 'admin',
      'DELETE /api/v1/users/{id}/passkeys': 'admin',
      'POST /api/v1/users/{id}/links': 'admin',
      'DELETE /api/v1/users/{id}/links/{mc_uuid}': 'admin',
      'GET /api/v1/users/{id}/sessions': 'admin',
      'DELETE /api/v1/users/{id}/sessions/{token_hash}': 'admin',
    });
  });

  it('describes the API key routes, the member routes and the bearer scheme: app-tier operations take a session or a key, admin ones a session only', async () => {
    const { internal } = createTestApps(createTestDeps(database()));
    type Op = { 'x-felis-tier'?: string; security?: Array<Record<string, string[]>> };
    const doc = (await (await internal.request('/openapi/external.json')).json()) as {
      paths: Record<string, Record<string, Op>>;
      components: { securitySchemes: Record<string, Record<string, string>> };
    };
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_session' });
    const op = (method: string, path: string) => doc.paths[path]?.[method];
    for (const [method, path] of [
      ['get', '/api/v1/account/api-keys'],
      ['post', '/api/v1/account/api-keys'],
      ['delete', '/api/v1/account/api-keys/{id}'],
      ['get', '/api/v1/servers/{name}/members'],
      ['post', '/api/v1/servers/{name}/members'],
      ['put', '/api/v1/servers/{name}/members/{user_id}'],
      ['delete', '/api/v1/servers/{name}/members/{user_id}'],
      ['get', '/api/v1/me'],
    ] as const) {
      expect(op(method, path), `${method} ${path}`).toMatchObject({ 'x-felis-tier': 'app', security: [{ session: [] }, { apiKey: [] }] });
    }
    expect(op('get', '/api/v1/users')).toMatchObject({ 'x-felis-tier': 'admin', security: [{ session: [] }] });
  });
});
