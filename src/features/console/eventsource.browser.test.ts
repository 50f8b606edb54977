import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { sessions } from '../../db/schema/accounts.js';
import { SESSION_COOKIE } from '../accounts/sessions/session-service.js';
import { createTestApps, createTestDeps } from '../../../test/helpers/app.js';
import { claimFor, runningServer } from '../../../test/helpers/console.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { serve } from '../../runtime/serve.js';
import { LogHubs } from './log-hub.js';

const CHROMIUM = '/usr/bin/chromium';
const database = useTestDatabase();

/**
 * The original panel reads the console with the browser's own EventSource: the session cookie
 * only, `onmessage` for lines and an `event: revoked` listener. Headless Chromium does exactly that
 * against the service on a real port.
 */
describe.skipIf(!existsSync(CHROMIUM))('console in a real browser', () => {
  it("Chromium's EventSource reads the stream with its cookie, resumes, and hears event: revoked", async () => {
    const deps = createTestDeps(database());
    deps.consoleLogs = new LogHubs({ cluster: deps.cluster, clock: deps.clock, log: deps.log }, { recheckMs: 300 });
    const name = await runningServer(deps);
    const user = await createUser(deps);
    await claimFor(deps, name, user.id);
    const session = await signIn(deps, { userId: user.id, host: 'localhost' });
    const listening = await serve({ fetch: createTestApps(deps).external.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    const origin = `http://localhost:${listening.port}`;
    const profile = mkdtempSync(join(tmpdir(), 'felis-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      await context.addCookies([{ name: SESSION_COOKIE, value: session.cookie.split('=')[1]!, domain: 'localhost', path: '/', httpOnly: true, sameSite: 'Lax' }]);
      const page = context.pages()[0] ?? (await context.newPage());
      // A page of the API's own origin (the API's answers forbid scripts by CSP, as they should).
      await page.route(`${origin}/panel`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>panel</title>' }));
      await page.goto(`${origin}/panel`);
      await page.evaluate((url) => {
        const w = window as unknown as { lines: Array<{ id: string; data: string }>; revoked: boolean; opens: number };
        w.lines = [];
        w.revoked = false;
        w.opens = 0;
        const source = new EventSource(url);
        source.onopen = () => (w.opens += 1);
        source.onmessage = (event) => w.lines.push({ id: event.lastEventId, data: event.data });
        source.addEventListener('revoked', () => {
          w.revoked = true;
          source.close();
        });
      }, `/api/v1/servers/${name}/console`);
      const lines = () => page.evaluate(() => (window as unknown as { lines: Array<{ id: string; data: string }> }).lines);
      await expect.poll(async () => (await lines()).some((l) => l.data.includes('Done (')), { timeout: 10_000 }).toBe(true);
      expect((await lines())[0]!.id).toBe(`${Math.floor(deps.clock.now().getTime() / 1000) - 5}.000000`);

      deps.clock.advance(1_000);
      deps.cluster.pods.write(name, '§eHello from the server');
      await expect.poll(async () => (await lines()).at(-1)?.data, { timeout: 10_000 }).toBe('[12:00:06 INFO]: §eHello from the server');

      // A dropped connection: the browser reconnects by itself with Last-Event-ID and misses nothing after it.
      deps.consoleLogs.close();
      deps.clock.advance(1_000);
      deps.cluster.pods.write(name, 'written while away');
      await expect.poll(async () => (await lines()).at(-1)?.data, { timeout: 15_000 }).toBe('[12:00:07 INFO]: written while away');
      const seen = (await lines()).map((l) => l.data);
      expect(seen.filter((d) => d.includes('Hello from the server'))).toHaveLength(1);
      expect(await page.evaluate(() => (window as unknown as { opens: number }).opens)).toBe(2);

      await deps.database.db.update(sessions).set({ revokedAt: deps.clock.now() }).where(eq(sessions.tokenHash, session.tokenHash));
      await expect.poll(() => page.evaluate(() => (window as unknown as { revoked: boolean }).revoked), { timeout: 10_000 }).toBe(true);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      await listening.close(100);
      deps.consoleLogs.close();
    }
  });
});
