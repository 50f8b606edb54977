import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
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

/**
 * Migrates once per run; each test file then gets its own copy of the migrated database, so
 * files never see each other's rows and a run never collides with another on the same server.
 */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'felis-test-'));
  const pglite = await PGlite.create();
  await migratePglite(pglite);
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  const dumpPath = join(dir, 'template.tar');
  writeFileSync(dumpPath, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', dumpPath);
  const image = join(dir, 'image');
  project.provide('imageDir', image);
  // In watch mode a rerun builds the image again, from the sources as they are then.
  project.onTestsRerun(() => {
    for (const path of [image, `${image}.ready`, `${image}.failed`, `${image}.lock`]) rmSync(path, { recursive: true, force: true });
  });

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

  return async () => {
    envtest?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (admin) {
      const rows = await admin<{ datname: string }[]>`select datname from pg_database where datname like ${`${prefix}%`}`;
      for (const { datname } of rows) await admin.unsafe(`drop database if exists "${datname}" with (force)`);
      await admin.end();
    }
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
