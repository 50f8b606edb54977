import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';

describe('OpenAPI documents', () => {
  const database = useTestDatabase();

  it('describe the server and image routes with their tiers and callers', async () => {
    const { internal } = createTestApps(createTestDeps(database()));
    const internalDoc = (await (await internal.request('/openapi/internal.json')).json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const wake = internalDoc.paths['/api/v1/internal/servers/{name}/wake']!.post!;
    expect(wake['x-felis-callers']).toEqual(['proxy']);
    expect(Object.keys(wake.responses as object)).toEqual(expect.arrayContaining(['202', '401', '403', '404', '409', '429', '503']));
    expect(internalDoc.paths['/api/v1/servers/by-host/{host}']!.get).toBeDefined();
    const externalDoc = (await (await internal.request('/openapi/external.json')).json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(externalDoc.paths['/api/v1/servers']!.post!['x-felis-tier']).toBe('admin');
    expect(externalDoc.paths['/api/v1/me/servers']!.get!['x-felis-tier']).toBe('app');
    expect(externalDoc.paths['/api/v1/images/{image_ref}']!.patch).toBeDefined();
    expect(JSON.stringify(externalDoc)).toContain('"FleetServer"');
  });
});
