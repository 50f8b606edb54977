import type { OpenAPIHono } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../../src/http/env.js';
import { bearer, createTestApp, createTestApps, createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { fixtureRoutes } from '../helpers/fixture-routes.js';
import { PAGE_PATHS } from '../../src/web/index.js';

const DOCUMENT_ROUTES = new Set(['/openapi/internal.json', '/openapi/external.json']);

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
}

/** `/a/:id{[0-9]+}` → `/a/{id}`. */
const toOpenApiPath = (path: string) => path.replace(/:([\w-]+)(\{[^}]*\})?\??/g, '{$1}');

/**
 * Every route an app serves (middleware, the document routes and the pages aside: the pages of
 * src/web answer HTML to browsers and are not part of the API) that its document omits.
 */
function undocumented(app: OpenAPIHono<AppEnv>, doc: OpenApiDocument): string[] {
  const missing: string[] = [];
  for (const route of app.routes) {
    if (route.method === 'ALL' || DOCUMENT_ROUTES.has(route.path) || PAGE_PATHS.includes(route.path)) continue;
    const operation = doc.paths[toOpenApiPath(route.path)]?.[route.method.toLowerCase()];
    if (!operation) missing.push(`${route.method} ${route.path}`);
  }
  return [...new Set(missing)];
}

async function fetchDocument(app: OpenAPIHono<AppEnv>, face: 'internal' | 'external'): Promise<OpenApiDocument> {
  const res = await app.request(`/openapi/${face}.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as OpenApiDocument;
}

describe('OpenAPI documents', () => {
  const database = useTestDatabase();

  it('documents every route of both faces (a route without a schema fails here)', async () => {
    const { internal, external } = createTestApps(createTestDeps(database()));
    const internalDoc = await fetchDocument(internal, 'internal');
    const externalDoc = await fetchDocument(internal, 'external');
    expect(undocumented(internal, internalDoc)).toEqual([]);
    expect(undocumented(external, externalDoc)).toEqual([]);
    expect(Object.keys(internalDoc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/metrics']));
    expect(Object.keys(externalDoc.paths)).toContain('/healthz');
    expect(Object.keys(externalDoc.paths)).not.toContain('/metrics');
  });

  it('is OpenAPI 3.1.0 with the service version, one document per face', async () => {
    const { internal } = createTestApps(createTestDeps(database()));
    for (const face of ['internal', 'external'] as const) {
      const doc = await fetchDocument(internal, face);
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.info.version).toBe('4.1.0');
      expect(doc.info.title).toContain(face);
    }
  });

  it('is served on the internal face only', async () => {
    const { external } = createTestApps(createTestDeps(database()));
    for (const face of ['internal', 'external']) {
      const res = await external.request(`/openapi/${face}.json`);
      expect(res.status).toBe(404);
    }
  });

  it('catches a route registered without a schema', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    app.get('/api/v1/fixture/plain', (c) => c.json({ ok: true }));
    const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '0' } }) as unknown as OpenApiDocument;
    expect(undocumented(app, doc)).toEqual(['GET /api/v1/fixture/plain']);
  });

  it('documents declared routes with their parameters, tier, callers and common errors', async () => {
    const deps = createTestDeps(database());
    const app = createTestApp('internal', deps, fixtureRoutes());
    const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '0' } }) as unknown as OpenApiDocument;
    expect(undocumented(app, doc)).toEqual([]);
    const put = doc.paths['/api/v1/fixture/items/{id}']?.put as Record<string, unknown> & { responses: Record<string, unknown> };
    expect(put['x-felis-tier']).toBe('service');
    expect(put['x-felis-callers']).toEqual(['limbo', 'ops']);
    expect(Object.keys(put.responses).sort()).toEqual(['200', '400', '401', '403', '413', '415', '500']);
  });

  it('answers the same document on every call, with or without a token', async () => {
    const { internal } = createTestApps(createTestDeps(database()));
    const first = await (await internal.request('/openapi/internal.json')).text();
    const second = await (await internal.request('/openapi/internal.json', { headers: bearer('ops') })).text();
    expect(second).toBe(first);
  });
});
