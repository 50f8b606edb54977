import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** The major of a range or an image tag: `^24.21.0`, `>=24.11 <25`, `node:24.21.0-bookworm-slim` → 24. */
function major(text: string): number {
  return Number(/(\d+)/.exec(text)![1]);
}

/**
 * One runtime for everyone: the `node` devDependency puts Node 24 LTS first on the PATH of every
 * npm script (`npm test`, `npm start`, `.ci/run`), whatever Node the machine has, and the image
 * runs the same major.
 */
describe('the runtime', () => {
  it('runs the tests on Node 24, the pinned devDependency', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
    expect(major(pkg.devDependencies.node!)).toBe(24);
    expect(process.versions.node).toBe(readFileSync(join(ROOT, 'node_modules/node/package.json'), 'utf8').match(/"version":\s*"([^"]+)"/)![1]);
  });

  it('says so in engines and in the types', () => {
    expect(major(pkg.engines.node)).toBe(24);
    expect(major(pkg.devDependencies['@types/node']!)).toBe(24);
  });

  it('builds the image on the same major pinned by digest, with OCI labels and a pg_dump of a chosen major', () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)![1]!;
    expect(base).toMatch(/^node:24[.\d]*-\w+-slim@sha256:[0-9a-f]{64}$/);
    for (const label of ['title', 'source', 'version', 'revision', 'base.name']) {
      expect(dockerfile).toContain(`org.opencontainers.image.${label}=`);
    }
    expect(/^ARG PG_MAJOR=(\d+)$/m.exec(dockerfile)?.[1]).toMatch(/^1[4-8]$/);
    expect(dockerfile).toContain('postgresql-client-${PG_MAJOR}');
  });
});
