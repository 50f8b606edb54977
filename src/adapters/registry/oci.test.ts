import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startRegistryStandIn, type RegistryStandIn } from '../../../test/helpers/registry.js';
import { OciRegistry } from './oci.js';
import { ImageNotInRegistryError, parseImageRef, formatImageRef, RegistryUnavailableError } from './types.js';

describe('OCI registry adapter against a distribution API stand-in', () => {
  let registry: RegistryStandIn | undefined;
  afterEach(async () => {
    await registry?.close();
    registry = undefined;
  });

  it('resolves a tag to the Docker-Content-Digest with a HEAD asking for OCI indexes and manifests', async () => {
    registry = await startRegistryStandIn();
    const digest = registry.push('mc/paper', '1.21');
    const adapter = new OciRegistry({ url: registry.url });
    expect(adapter.host).toBe(registry.host);
    expect(await adapter.resolve(parseImageRef(`${registry.host}/mc/paper:1.21`)!)).toBe(digest);
    expect(registry.requests).toEqual([
      expect.objectContaining({ method: 'HEAD', path: '/v2/mc/paper/manifests/1.21', accept: expect.stringContaining('application/vnd.oci.image.manifest.v1+json') }),
    ]);
  });

  it('answers ImageNotInRegistryError for an unknown tag and RegistryUnavailableError for 5xx and a closed port', async () => {
    registry = await startRegistryStandIn();
    const adapter = new OciRegistry({ url: registry.url });
    await expect(adapter.resolve(parseImageRef(`${registry.host}/mc/none:1`)!)).rejects.toBeInstanceOf(ImageNotInRegistryError);
    registry.push('mc/paper', '1.21');
    registry.failWith(503);
    await expect(adapter.resolve(parseImageRef(`${registry.host}/mc/paper:1.21`)!)).rejects.toBeInstanceOf(RegistryUnavailableError);
    registry.failWith(500);
    await expect(adapter.resolve(parseImageRef(`${registry.host}/mc/paper:1.21`)!)).rejects.toBeInstanceOf(RegistryUnavailableError);

    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const unreachable = new OciRegistry({ url: `http://127.0.0.1:${closedPort}`, timeoutMs: 2000 });
    await expect(unreachable.resolve({ registry: `127.0.0.1:${closedPort}`, repository: 'mc/paper', tag: '1' })).rejects.toBeInstanceOf(
      RegistryUnavailableError,
    );
  });

  it('follows the bearer token challenge', async () => {
    registry = await startRegistryStandIn({ token: 'stand-in-token' });
    const digest = registry.push('mc/fabric', 'latest');
    const adapter = new OciRegistry({ url: registry.url });
    expect(await adapter.resolve(parseImageRef(`${registry.host}/mc/fabric`)!)).toBe(digest);
    expect(registry.requests.map((r) => `${r.method} ${r.path} ${r.authorization ?? '-'}`)).toEqual([
      'HEAD /v2/mc/fabric/manifests/latest -',
      'GET /token -',
      'HEAD /v2/mc/fabric/manifests/latest Bearer stand-in-token',
    ]);
  });

  it('falls back to GET when HEAD is refused, hashing the manifest when no digest header is sent', async () => {
    registry = await startRegistryStandIn({ noHead: true, noDigestHeader: true });
    const digest = registry.push('mc/paper', '1.20');
    const adapter = new OciRegistry({ url: registry.url });
    expect(await adapter.resolve(parseImageRef(`${registry.host}/mc/paper:1.20`)!)).toBe(digest);
    expect(await adapter.resolve(parseImageRef(`${registry.host}/mc/paper@${digest}`)!)).toBe(digest);
  });
});

describe('image references', () => {
  it.each([
    ['itzg/minecraft-server:java21', { repository: 'itzg/minecraft-server', tag: 'java21' }],
    ['registry.felis.test/mc/paper:1.21', { registry: 'registry.felis.test', repository: 'mc/paper', tag: '1.21' }],
    ['localhost:5000/paper', { registry: 'localhost:5000', repository: 'paper' }],
    [`paper@sha256:${'a'.repeat(64)}`, { repository: 'paper', digest: `sha256:${'a'.repeat(64)}` }],
  ])('parses %s', (text, expected) => {
    expect(parseImageRef(text)).toEqual(expected);
    expect(formatImageRef(parseImageRef(text)!)).toBe(text);
  });

  it.each(['', 'UPPER/case', 'a b', 'paper:', 'paper@sha256:short', 'x/../y', 'paper:tag;rm'])('refuses %j', (text) => {
    expect(parseImageRef(text)).toBeUndefined();
  });
});
