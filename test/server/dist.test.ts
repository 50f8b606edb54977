import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { builtImage, spawnService } from '../helpers/process.js';
import { SERVICE_VERSION } from '../../src/version.js';

const root = resolve(import.meta.dirname, '../..');

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * The container image's layout without a Docker engine (test/helpers/process.ts builtImage: `npm
 * run build`'s output in dist/, with drizzle/ and package.json beside it as the Dockerfile's
 * runtime stage copies them), run by node.
 */
describe('the built output (what the image runs)', () => {
  let image!: string;

  beforeAll(async () => {
    image = await builtImage();
  }, 120_000);

  it("runs what the Dockerfile's CMD runs, as docs/operations.md says", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];
    expect(cmd).toBeDefined();
    expect(readFileSync(join(root, 'docs/operations.md'), 'utf8').replace(/\s+/g, ' ')).toContain(`\`CMD ${cmd}\``);
    expect(JSON.parse(cmd!)).toEqual(['node', ...JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start.split(' ').slice(1)]);
  });

  it('imports only production dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const used = new Set<string>();
    for (const file of jsFiles(join(image, 'dist'))) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?<![\w'"])(?:from|import)\s*\(?\s*'([^'.][^']*)'/g)) {
        if (spec!.startsWith('node:') || builtinModules.includes(spec!)) continue;
        const parts = spec!.split('/');
        used.add(spec!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
      }
    }
    expect(used.size).toBeGreaterThan(0);
    expect([...used].filter((name) => !(name in pkg.dependencies))).toEqual([]);
    expect(jsFiles(join(image, 'dist')).some((f) => f.endsWith('.test.js'))).toBe(false);
  });

  it('starts with node dist/main.js, applies the migrations from drizzle/, answers the probes and stops on SIGTERM', async () => {
    const service = await spawnService(process.execPath, [join(image, 'dist/main.js')], { HOST: '0.0.0.0' });
    try {
      expect(service.lines.find((l) => l.msg === 'listening')).toMatchObject({ host: '0.0.0.0', database: 'pglite' });
      for (const port of [service.internalPort, service.externalPort]) {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ status: 'ok', version: SERVICE_VERSION });
      }
      expect((await fetch(`http://127.0.0.1:${service.internalPort}/readyz`)).status).toBe(200);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      expect(service.stderr()).toBe('');
    } finally {
      service.kill();
    }
  }, 90_000);
});
