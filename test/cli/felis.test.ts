import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVICE_VERSION } from '../../src/version.js';

const root = join(import.meta.dirname, '../..');

/** `felis ARGS…` as a user runs it (bin/felis.mjs: the compiled command, or the sources through tsx). */
async function felis(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bin/felis.mjs', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// Each run is a cold start of a process (under tsx when dist/ is stale): generous time-outs.
describe('the felis command', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists every verb; --version prints the version; a verb explains itself', async () => {
    const help = await felis(['--help']);
    expect(help.code).toBe(0);
    for (const verb of ['setup-token', 'recover-owner', 'user create', 'user list', 'server create', 'server list', 'server status', 'server wake', 'server stop', 'backup create', 'backup list', 'db backup', 'db restore', 'check-updates']) expect(help.stdout).toContain(`  ${verb} `);
    expect(await felis(['--version'])).toMatchObject({ code: 0, stdout: `${SERVICE_VERSION}\n` });
    const verb = await felis(['db', 'restore', '--help']);
    expect(verb).toMatchObject({ code: 0 });
    expect(verb.stdout).toContain('Usage: felis db restore BUNDLE.tar.gz');
  });

  it('a mistake in the words is exit 2 with one line that says what to do', async () => {
    const unknown = await felis(['serve']);
    expect(unknown).toMatchObject({ code: 2, stderr: 'felis: no verb "serve"; felis --help lists them\n' });
    expect(await felis(['db', 'backup', '--label', 'weekly'])).toMatchObject({ code: 2, stderr: '--label must be daily or manual\n' });
    expect(await felis(['db', 'restore'])).toMatchObject({ code: 2, stderr: 'usage: felis db restore <bundle.tar.gz>\n' });
    expect((await felis([])).code).toBe(2);
  });

  it('setup-token, then db backup, against an embedded database in DATA_DIR', async () => {
    const env = { DATA_DIR: join(dir, 'data') };
    const minted = await felis(['setup-token'], env);
    expect(minted.code).toBe(0);
    expect(minted.stdout.split('\n')[1]).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const backup = await felis(['db', 'backup', '--label', 'manual'], env);
    expect(backup.code).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({ label: 'manual' });
    expect(readdirSync(join(dir, 'data', 'db-backups')).some((name) => name.endsWith('.tar.gz'))).toBe(true);
  });
});
