import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { COMPOSE_VARIABLES } from '../../bin/env-example.js';
import { SETTING_NAMES } from '../../src/config.js';
import { SERVICE_VERSION } from '../../src/version.js';

const root = new URL('../../', import.meta.url);
const text = readFileSync(new URL('compose.yaml', root), 'utf8');
type Service = { image?: string; healthcheck?: { test: unknown }; environment?: Record<string, string>; depends_on?: Record<string, { condition: string }>; volumes?: string[] };
const compose = parse(text) as { services: Record<string, Service>; volumes: Record<string, unknown> };

/** Whether `docker compose` (v2) is on this machine: then it checks the file as Compose reads it. */
function composeCli(): boolean {
  try {
    execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('compose.yaml', () => {
  it('runs the service on PostgreSQL, waiting for its healthcheck, with its data on a volume', () => {
    const { felis, postgres } = compose.services;
    expect(felis?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(felis?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/felis:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/felis$/);
    expect(postgres?.environment).toMatchObject({ POSTGRES_USER: 'felis', POSTGRES_DB: 'felis' });
    expect(felis?.volumes).toContain('felis-data:/var/lib/felis');
    expect(felis?.environment?.DATA_DIR).toBe('/var/lib/felis');
    expect(felis?.environment?.HOST).toBe('0.0.0.0');
  });

  it('gives every container a healthcheck', () => {
    for (const [name, service] of Object.entries(compose.services)) expect(service.healthcheck?.test, name).toBeDefined();
  });

  it("sets only the service's own settings on it, and reads only variables .env.example lists", () => {
    for (const name of Object.keys(compose.services.felis?.environment ?? {})) expect(SETTING_NAMES, name).toContain(name);
    const listed = new Set<string>([...SETTING_NAMES, ...Object.keys(COMPOSE_VARIABLES)]);
    const read = [...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!);
    expect(read.filter((name) => !listed.has(name))).toEqual([]);
  });

  it('marks the required variables so that Compose refuses to start without them', () => {
    for (const name of ['POSTGRES_PASSWORD']) expect(text).toMatch(new RegExp(`\\$\\{${name}:\\?`));
    expect(readFileSync(new URL('deploy/compose/s3-start.sh', root), 'utf8')).toMatch(/S3_ACCESS_KEY:\?.*S3_SECRET_KEY:\?/);
  });

  it('builds or pulls the image of this release', () => {
    expect(compose.services.felis?.image).toBe(`ghcr.io/felis/control-plane:\${FELIS_VERSION:-${SERVICE_VERSION}}`);
  });

  it.runIf(composeCli())('is valid as `docker compose config` reads it', () => {
    const out = execFileSync('docker', ['compose', '-f', 'compose.yaml', '--profile', 's3', 'config', '--quiet'], {
      cwd: root,
      env: { ...process.env, POSTGRES_PASSWORD: 'x', S3_ACCESS_KEY: 'a', S3_SECRET_KEY: 'b' },
      encoding: 'utf8',
    });
    expect(out).toBe('');
  });
});
