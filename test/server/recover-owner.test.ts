import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { auditLog } from '../../src/db/schema/audit.js';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { startTestService } from '../helpers/service.js';

type Run = { code: number; stdout: string; stderr: string };

/** `npm run recover-owner` as a person runs it, against the service's configuration. */
function recoverOwner(env: Record<string, string>, args: string[] = []): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/recover-owner.ts', ...args],
      { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', CONSOLE_HOST: 'console.felis.test', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The console host's redeem over the real port, as the printed curl command sends it. */
async function redeem(port: number, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/auth/setup/redeem`, {
    method: 'POST',
    headers: { Host: 'console.felis.test', 'Content-Type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * The lost-owner recovery end to end: a real service makes its owner, the command runs as a
 * separate process on that service's database, and the token it prints signs in on the service.
 * PostgreSQL (TEST_DATABASE_URL): beside the running service. The embedded database: refused
 * with one line while the service holds it, then run with the service stopped.
 */
describe('npm run recover-owner against a service database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-recover-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('mints a token that signs in as the same owner on the service, audited, deleting nothing', { timeout: 120_000 }, async () => {
    const pgUrl = await createPostgresTestDatabase();
    // DATABASE_URL empty: the embedded database in DATA_DIR, as `npm start` opens it.
    const env = { DATABASE_URL: pgUrl ?? '', DATA_DIR: dir };
    let service = await startTestService(env);
    const setupToken = service.captured.lines().find((l) => typeof l.setup_token === 'string')!.setup_token as string;
    const created = await redeem(service.external.port, setupToken);
    expect(created.status).toBe(200);
    const ownerId = created.body.user_id;

    let run: Run;
    if (pgUrl) {
      run = await recoverOwner(env);
    } else {
      const refused = await recoverOwner(env);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toContain(`open in another Felis process (pid ${process.pid})`);
      expect(refused.stderr).toContain('stop the service first');
      expect(refused.stderr).not.toMatch(/\n\s+at /);
      await service.stop();
      run = await recoverOwner(env);
      service = await startTestService(env);
    }
    try {
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const lines = run.stdout.split('\n');
      expect(lines[0]).toContain('Owner recovery token for "owner"');
      const token = lines[1]!;
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      // The printed command names the console host and carries the token.
      expect(run.stdout).toContain(`-H 'Host: console.felis.test'`);
      expect(run.stdout).toContain(`{"token":"${token}"}`);

      const recovered = await redeem(service.external.port, token);
      expect(recovered.status).toBe(200);
      expect(recovered.body).toMatchObject({ user_id: ownerId, username: 'owner', role: 'owner', setup_required: true });
      const audit = await service.deps.database.db.select().from(auditLog).where(eq(auditLog.target, ownerId as string));
      expect(audit.map((a) => a.action).sort()).toEqual(['setup.recover', 'setup.recovery_token', 'setup.redeem']);
      expect(audit.find((a) => a.action === 'setup.recovery_token')!.actor).toMatch(/^cli:/);
      expect((await redeem(service.external.port, token)).status).toBe(400);
    } finally {
      await service.stop();
    }
  });
});
