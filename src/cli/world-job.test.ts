import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { seedWorld, useTempDir } from '../../test/helpers/worlds.js';
import { LocalBackupStore } from '../adapters/backup-store/local.js';
import { hashStream } from '../features/worlds/volumes/archive.js';
import { main, stepFromArgs } from './world-job.js';

const run = promisify(execFile);

describe('the world-job CLI on a real folder and the local store', () => {
  const tempDir = useTempDir('felis-world-job-');

  function setUp() {
    const root = tempDir();
    const folder = join(root, 'data');
    mkdirSync(join(folder, 'world'), { recursive: true });
    writeFileSync(join(folder, 'world', 'level.dat'), 'the first world');
    const env = { WORLD_JOB_LOCAL_STORE: join(root, 'store'), TERMINATION_LOG: join(root, 'termination-log') };
    const quiet = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const cli = async (...args: string[]) => {
      const code = await main(args, env);
      return { code, outcome: JSON.parse(readFileSync(env.TERMINATION_LOG, 'utf8')) as Record<string, unknown> };
    };
    return { root, folder, env, cli, store: new LocalBackupStore(env.WORLD_JOB_LOCAL_STORE), restore: () => quiet.mockRestore() };
  }

  it('backs up (skipping what an archive cannot hold), restores with a snapshot first, and refuses an archive whose hash differs', async () => {
    const { folder, cli, store, restore } = setUp();
    const seeded = await seedWorld(folder);
    const first = readFileSync(join(folder, 'world', 'level.dat'));
    try {
      const backup = await cli('backup', '--folder', folder, '--tag', 'job-1', '--key', 'worlds/a/one.tar.gz');
      expect(backup.code).toBe(0);
      const archive = backup.outcome.archive as { sha256: string; size: number; skipped: number; verified: boolean };
      expect(archive).toMatchObject({ verified: true, skipped: seeded.skippable });
      expect((await hashStream(await store.get('worlds/a/one.tar.gz'))).sha256).toBe(archive.sha256);

      writeFileSync(join(folder, 'world', 'level.dat'), 'a later world');
      const wrong = await cli('restore', '--folder', folder, '--tag', 'job-2', '--key', 'worlds/a/one.tar.gz', '--sha256', 'b'.repeat(64));
      expect(wrong).toMatchObject({ code: 1, outcome: { ok: false, code: 'backup_corrupt' } });
      expect(readFileSync(join(folder, 'world', 'level.dat'), 'utf8')).toBe('a later world');

      const good = await cli('restore', '--folder', folder, '--tag', 'job-3', '--key', 'worlds/a/one.tar.gz', '--sha256', archive.sha256, '--snapshot-key', 'worlds/a/snap.tar.gz');
      expect(good).toMatchObject({ code: 0, outcome: { ok: true, snapshot: { verified: true } } });
      expect(readFileSync(join(folder, 'world', 'level.dat'))).toEqual(first);
      expect(readdirSync(join(folder, '..')).filter((n) => n.startsWith('data.'))).toEqual([]);
    } finally {
      await seeded.close();
      restore();
    }
  });

  it('reports a missing or escaping export path as not_found, and exports a file', async () => {
    const { folder, cli, restore } = setUp();
    try {
      expect(await cli('export', '--folder', folder, '--tag', 'job-4', '--key', 'exports/t1', '--path', 'no/such')).toMatchObject({
        code: 1,
        outcome: { ok: false, code: 'not_found' },
      });
      expect(await cli('export', '--folder', folder, '--tag', 'job-5', '--key', 'exports/t2', '--path', '../escape')).toMatchObject({
        code: 1,
        outcome: { ok: false, code: 'not_found' },
      });
      expect(await cli('export', '--folder', folder, '--tag', 'job-6', '--key', 'exports/t3', '--path', 'world/level.dat')).toMatchObject({ code: 0, outcome: { ok: true } });
    } finally {
      restore();
    }
  });

  it('refuses bad arguments before touching anything', async () => {
    expect(() => stepFromArgs(['backup', '--folder', 'relative', '--tag', 't', '--key', 'k'])).toThrow('--folder');
    expect(() => stepFromArgs(['wipe', '--folder', '/data', '--tag', 't', '--key', 'k'])).toThrow();
    expect(() => stepFromArgs(['restore', '--folder', '/data', '--tag', 't', '--key', 'k', '--sha256', 'nope'])).toThrow();
    expect(() => stepFromArgs(['backup', '--folder', '/data', '--tag', 't', '--key', 'k', '--unknown', 'x'])).toThrow();
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await main(['backup', '--folder', '/data', '--tag', 't', '--key', 'k'], {})).toBe(2); // no store configured
    err.mockRestore();
  });

  it('runs as its own process, as the Job runs it', async () => {
    const { folder, env } = setUp();
    const { stdout } = await run(join('node_modules', '.bin', 'tsx'), ['src/cli/world-job.ts', 'backup', '--folder', folder, '--tag', 'job-7', '--key', 'worlds/a/proc.tar.gz'], {
      env: { PATH: process.env.PATH, ...env },
    });
    const outcome = JSON.parse(stdout.trim()) as { ok: boolean; archive: { verified: boolean } };
    expect(outcome).toMatchObject({ ok: true, archive: { verified: true } });
    expect(JSON.parse(readFileSync(env.TERMINATION_LOG, 'utf8'))).toEqual(outcome);
  }, 30_000);
});
