import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settingDefault } from '../../src/config.js';
import { SERVICE_VERSION } from '../../src/version.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** One version everywhere a user or an operator reads it. */
describe('the version', () => {
  it('is the same in package.json, src/version.ts, the Dockerfile, deploy/ and the world Job image', () => {
    expect(JSON.parse(read('package.json')).version).toBe(SERVICE_VERSION);
    expect(read('Dockerfile')).toContain(`ARG VERSION=${SERVICE_VERSION}\n`);
    expect(read('deploy/base/kustomization.yaml')).toContain(`newTag: ${SERVICE_VERSION}\n`);
    expect(settingDefault('WORLD_JOB_IMAGE')).toBe(`ghcr.io/felis/control-plane:${SERVICE_VERSION}`);
  });

  it('has its entry in CHANGELOG.md, below the unreleased changes', () => {
    const changelog = read('CHANGELOG.md');
    const versions = [...changelog.matchAll(/^## \[([^\]]+)\]/gm)].map((m) => m[1]);
    expect(versions[0]).toBe('Unreleased');
    expect(versions[1]).toBe(SERVICE_VERSION);
  });
});
