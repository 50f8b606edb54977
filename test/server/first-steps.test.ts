import { spawn } from 'node:child_process';
import { closeSync, createWriteStream, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { startService } from '../../src/service.js';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/ports.js';

/** The shell block that follows the `<!-- first-steps` marker in the README, as written there. */
function firstStepsBlock(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const match = /<!-- first-steps[^\n]*-->\n```sh\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error('README.md has no first-steps block');
  return match[1]!;
}

/**
 * The README's first steps, pasted as written, against the service as `npm start` runs it: no
 * host, mail or token settings (the .localhost defaults, mail to the log), the log in `felis.log`
 * beside the commands. Only the port changes, so that a run beside another service does not collide.
 */
describe("the README's first steps", () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-first-steps-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('take a fresh service to a running server: owner, verified e-mail, a server created and woken', { timeout: 120_000 }, async () => {
    const block = firstStepsBlock();
    expect(block).toContain('http://console.localhost:8080/');
    expect(block).not.toMatch(/-H 'Host:/i);
    const port = await freePort();
    const config = loadConfig({
      PATH: process.env.PATH,
      DATABASE_URL: (await createPostgresTestDatabase()) ?? 'memory:',
      DATA_DIR: join(dir, 'data'),
      EXTERNAL_PORT: String(port),
      INTERNAL_PORT: '0',
    } as NodeJS.ProcessEnv);
    expect(config).toMatchObject({ consoleHost: 'console.localhost', mailTransport: 'log' });
    const logFile = createWriteStream(join(dir, 'felis.log'));
    const service = await startService(config, createLogger('info', logFile));
    try {
      // A person reads the token off the log before pasting the block: wait until the log file has it.
      await vi.waitFor(() => expect(readFileSync(join(dir, 'felis.log'), 'utf8')).toContain('"setup_token"'), { timeout: 10_000 });
      const script = block.replaceAll(':8080/', `:${port}/`);
      // stderr into a file, as a terminal would take it: curl opens /dev/stderr, which a pipe to
      // this process (a socket) would refuse.
      const errPath = join(dir, 'stderr.txt');
      const errFd = openSync(errPath, 'w');
      const stdout = await new Promise<string>((resolve, reject) => {
        const child = spawn('bash', ['-c', script], { cwd: dir, stdio: ['ignore', 'pipe', errFd] });
        let out = '';
        child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
        child.once('exit', (code) => (clearTimeout(timer), code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
      });
      closeSync(errFd);
      // The redeem's answer goes to the terminal (stderr), the cookie into $SESSION.
      expect(JSON.parse(readFileSync(errPath, 'utf8'))).toMatchObject({ username: 'owner', role: 'owner', setup_required: true });
      const answers = stdout.replace(/}\s*{/g, '}\n{').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(answers[0]).toMatchObject({ sent: true });
      expect(answers[1]).toMatchObject({ verified: true, email: 'you@example.com' });
      expect(answers[2]).toMatchObject({ name: 'survival', subdomain: 'survival', desiredState: 'Stopped' });
      expect(answers[3]).toEqual({ name: 'survival', desiredState: 'Running' });
      expect(answers[4]).toMatchObject({ name: 'survival', phase: 'Running', ready: true, desiredState: 'Running' });
      expect(answers).toHaveLength(5);
    } finally {
      await service.stop();
      logFile.end();
    }
  });
});
