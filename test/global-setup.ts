import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import type { ProvidedContext } from 'vitest';
import type { TestProject } from 'vitest/node';
import { findSeed, keepSeed } from '../src/db/embedded-seed.js';
import { migratePglite, migratePostgres } from '../src/db/migrate.js';
import { ENVTEST_BIN, envtestAvailable, startEnvtest } from './helpers/envtest.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PGlite: a migrated data directory dump that each test file loads. */
    pgliteTemplate: string;
    /** PostgreSQL: a migrated template database each test file copies, with the server URL. */
    postgresTemplate: { url: string; database: string } | null;
    /** The run's real Kubernetes API server (test/helpers/envtest.ts): its admin kubeconfig, or null without the binaries. */
    envtestKubeconfig: string | null;
    /** Where test/helpers/process.ts builds the image's layout (dist/, drizzle/) once per run, on first demand. */
    imageDir: string;
  }
}

type Provided = { [K in keyof ProvidedContext]: ProvidedContext[K] };
interface SharedRun {
  prepared: Promise<{ values: Provided; teardown: () => Promise<void> }>;
  projects: number;
}
const RUN = Symbol.for('felis.test.global-setup');

/**
 * vitest.config.ts runs the suite as two projects (files sharing a worker's module graph, and
 * files isolated), and vitest calls this once per project: the first call prepares the run, the
 * others take the same templates and API server, and the last one to finish tears them down.
 */
export default async function setup(project: TestProject) {
  const holder = globalThis as typeof globalThis & { [RUN]?: SharedRun };
  const run = (holder[RUN] ??= { prepared: prepareRun(), projects: 0 });
  run.projects += 1;
  const { values, teardown } = await run.prepared;
  for (const key of Object.keys(values) as Array<keyof Provided>) project.provide(key, values[key]);
  // In watch mode a rerun builds the image again, from the sources as they are then.
  project.onTestsRerun(() => {
    const image = values.imageDir;
    for (const path of [image, `${image}.ready`, `${image}.failed`, `${image}.lock`]) rmSync(path, { recursive: true, force: true });
  });
  return async () => {
    run.projects -= 1;
    if (run.projects > 0) return;
    delete holder[RUN];
    await teardown();
  };
}

/**
 * Migrates once per run; each test file then gets its own copy of the migrated database, so
 * files never see each other's rows and a run never collides with another on the same server.
 */
async function prepareRun() {
  const values = {} as Provided;
  const project = { provide: <K extends keyof Provided>(key: K, value: Provided[K]) => void (values[key] = value) };
  const dir = mkdtempSync(join(tmpdir(), 'felis-test-'));
  const pglite = await PGlite.create();
  await migratePglite(pglite);
  const dump = await pglite.dumpDataDir('none');
  // The services and commands the tests start on a new embedded database load the machine's kept
  // copy of one (src/db/embedded-seed.ts) instead of an initdb each; the first run on a machine
  // keeps it from this template rather than from whichever of them comes first.
  if (!findSeed()) keepSeed(new Uint8Array(await (await pglite.dumpDataDir('gzip')).arrayBuffer()));
  await pglite.close();
  const dumpPath = join(dir, 'template.tar');
  writeFileSync(dumpPath, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', dumpPath);
  project.provide('imageDir', join(dir, 'image'));

  const url = process.env.TEST_DATABASE_URL;
  let admin: postgres.Sql | undefined;
  let prefix = '';
  if (url) {
    prefix = `felis_t${Date.now().toString(36)}${process.pid}`;
    const template = `${prefix}_tpl`;
    admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${template}"`);
    await migratePostgres(withDatabase(url, template));
    project.provide('postgresTemplate', { url, database: template });
  } else {
    project.provide('postgresTemplate', null);
  }

  // One API server for the whole run; each test file works in namespaces of its own.
  const envtest = envtestAvailable() ? startEnvtest() : undefined;
  process.stdout.write(
    envtest
      ? `Kubernetes suites: against a real kube-apiserver (binaries in ${ENVTEST_BIN})\n`
      : `Kubernetes suites: no kube-apiserver binaries in ${ENVTEST_BIN} (npm run envtest:build), so the real-API-server tests are skipped\n`,
  );
  project.provide('envtestKubeconfig', envtest?.kubeconfig ?? null);

  const teardown = async () => {
    envtest?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (admin) {
      const rows = await admin<{ datname: string }[]>`select datname from pg_database where datname like ${`${prefix}%`}`;
      for (const { datname } of rows) await admin.unsafe(`drop database if exists "${datname}" with (force)`);
      await admin.end();
    }
  };
  return { values, teardown };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
