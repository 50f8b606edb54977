import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistryStandIn, type RegistryStandIn } from '../../../test/helpers/registry.js';
import { OciRegistry } from '../../adapters/registry/oci.js';
import { StaticRegistry } from '../../adapters/registry/static.js';
import { checkDependencies, checkOwnImage, compareVersions } from './update-check.js';

/** An npm registry on 127.0.0.1 that answers `GET /<name>` with dist-tags, as the real one does. */
async function npmStandIn(latest: Record<string, string>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1));
    if (!(name in latest)) return void res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Not found"}');
    res.writeHead(200, { 'Content-Type': 'application/vnd.npm.install-v1+json' });
    res.end(JSON.stringify({ name, 'dist-tags': { latest: latest[name] }, versions: {} }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('the update check', () => {
  const root = mkdtempSync(join(tmpdir(), 'felis-updates-'));
  let npm: Awaited<ReturnType<typeof npmStandIn>>;
  let registry: RegistryStandIn;

  beforeAll(async () => {
    const dependencies = { hono: '^4.13.0', zod: '^4.6.0', '@kubernetes/client-node': '~1.4.0', gone: '^1.0.0', missing: '^2.0.0' };
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'felis', dependencies }));
    for (const [name, version] of Object.entries({ hono: '4.13.19', zod: '4.6.7', '@kubernetes/client-node': '1.4.0', gone: '1.0.0' })) {
      mkdirSync(join(root, 'node_modules', name), { recursive: true });
      writeFileSync(join(root, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
    }
    npm = await npmStandIn({ hono: '4.14.1', zod: '4.6.7', '@kubernetes/client-node': '2.0.1', missing: '2.0.0' });
    registry = await startRegistryStandIn();
  });

  afterAll(async () => {
    npm.server.close();
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('names each dependency current, available, pinned, unknown or unreadable as the contract says', async () => {
    const components = await checkDependencies({ root, registryUrl: npm.url });
    expect(Object.fromEntries(components.map((c) => [c.name, c]))).toEqual({
      hono: { name: 'hono', state: 'available', current: '4.13.19', latest: '4.14.1', selector: '--dependency=hono' },
      zod: { name: 'zod', state: 'current', current: '4.6.7' },
      '@kubernetes/client-node': { name: '@kubernetes/client-node', state: 'pinned', current: '1.4.0', note: 'held at ~1.4.0 by policy' },
      gone: { name: 'gone', state: 'unknown', current: '1.0.0', error: 'release feed: the registry answered 404' },
      missing: { name: 'missing', state: 'unreadable', error: expect.stringMatching(/^installed version: /) },
    });
  });

  it('says unknown for every dependency when the registry cannot be reached', async () => {
    const components = await checkDependencies({ root, registryUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
    expect(components.find((c) => c.name === 'hono')).toMatchObject({ state: 'unknown', current: '4.13.19' });
    expect(components.find((c) => c.name === 'zod')?.state).toBe('unknown');
  });

  it("compares the running image's tag with the registry's latest", async () => {
    const oci = new OciRegistry({ url: registry.url });
    registry.push('felis/control-plane', '4.1.0');
    registry.push('felis/control-plane', 'latest');
    const image = `${registry.host}/felis/control-plane:4.1.0`;
    expect(await checkOwnImage(oci, image)).toMatchObject({ name: 'image', state: 'available', current: '4.1.0', latest: expect.stringMatching(/^latest@sha256:/) });
    registry.remove('felis/control-plane', 'latest');
    expect(await checkOwnImage(oci, image)).toMatchObject({ state: 'unknown', current: '4.1.0' });
    expect(await checkOwnImage(new StaticRegistry(), image)).toMatchObject({ state: 'unknown', error: 'no REGISTRY_URL to ask' });
    expect(await checkOwnImage(oci, undefined)).toMatchObject({ state: 'unknown' });
  });

  it('orders versions numerically, a pre-release before its release', () => {
    expect(compareVersions('1.10.0', '1.9.9')).toBe(1);
    expect(compareVersions('2.0.0-rc.1', '2.0.0')).toBe(-1);
    expect(compareVersions('v4.1.0', '4.1.0')).toBe(0);
    fc.assert(
      fc.property(fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)), fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)), (a, b) => {
        const cmp = compareVersions(a.join('.'), b.join('.'));
        expect(cmp).toBe(-compareVersions(b.join('.'), a.join('.')));
        const lexical = a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
        expect(cmp).toBe(Math.sign(lexical));
      }),
    );
  });
});
