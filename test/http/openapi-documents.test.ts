import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { documentUrl, FACES, formatDocument } from '../../bin/openapi.js';
import { createTestApps, createTestDeps } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { fixtureRoutes } from '../helpers/fixture-routes.js';

type Document = { paths: Record<string, Record<string, unknown>> };

/** `GET /api/v1/servers/{name}`, one per operation of a document. */
function operations(doc: Document): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/**
 * The API's reference is the pair of documents committed in docs/api/. They must be what the
 * service serves: a route added, removed or changed without `npm run openapi` fails here, first
 * with the operations that differ, then with the whole document.
 */
describe('the committed OpenAPI documents (docs/api/) are what the service serves', () => {
  const database = useTestDatabase();

  for (const face of FACES) {
    it(`${face} face`, async () => {
      const { internal } = createTestApps(createTestDeps(database()));
      const served = (await (await internal.request(`/openapi/${face}.json`)).json()) as Document;
      const committed = JSON.parse(readFileSync(documentUrl(face), 'utf8')) as Document;
      const hint = `docs/api/openapi-${face}.json is stale: run \`npm run openapi\` and commit it`;
      expect(operations(committed), hint).toEqual(operations(served));
      expect(committed, hint).toEqual(served);
      // Byte for byte too, so that the committed file is exactly what the script writes.
      expect(readFileSync(documentUrl(face), 'utf8'), hint).toBe(formatDocument(served));
    });
  }

  it('fails for a route added without regenerating: the served operations then differ', async () => {
    const { internal, external } = createTestApps(createTestDeps(database()));
    external.addRoutes(fixtureRoutes());
    const served = (await (await internal.request('/openapi/external.json')).json()) as Document;
    const committed = JSON.parse(readFileSync(documentUrl('external'), 'utf8')) as Document;
    const added = operations(served).filter((op) => !operations(committed).includes(op));
    expect(added.length).toBeGreaterThan(0);
    expect(added.every((op) => op.includes('/fixture'))).toBe(true);
  });

  it('lists the operations the panel and the plugins call (a sample of each face)', () => {
    const internalOps = operations(JSON.parse(readFileSync(documentUrl('internal'), 'utf8')) as Document);
    const externalOps = operations(JSON.parse(readFileSync(documentUrl('external'), 'utf8')) as Document);
    expect(internalOps).toEqual(expect.arrayContaining(['GET /healthz', 'GET /api/v1/servers/by-host/{host}', 'GET /session/minecraft/hasJoined']));
    expect(externalOps).toEqual(expect.arrayContaining(['POST /api/v1/auth/setup/redeem', 'POST /api/v1/servers', 'POST /api/v1/servers/{name}/wake']));
    expect(externalOps.length).toBeGreaterThan(100);
  });
});
