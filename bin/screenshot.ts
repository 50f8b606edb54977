/**
 * The README's picture of a server's page (`npm run screenshot`): the service on the default hosts
 * (embedded database in a throw-away folder, simulated cluster), an owner with a running server
 * whose console has answered a command, photographed by headless Chromium into
 * docs/panel-server.png.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/lib/logger.js';
import { startService } from '../src/service.js';
import { freePort, launchPasskeyBrowser } from '../test/browser/browser.js';
import { createUser, signIn } from '../test/helpers/sessions.js';

const dataDir = mkdtempSync(join(tmpdir(), 'felis-shot-'));
const port = await freePort();
const config = loadConfig({ DATABASE_URL: 'memory:', DATA_DIR: dataDir, HOST: '127.0.0.1', EXTERNAL_PORT: String(port), INTERNAL_PORT: '0', MAIL_TRANSPORT: 'none', LOG_LEVEL: 'warn' });
const service = await startService(config, createLogger('warn', pino.destination({ dest: '/dev/null', sync: false })));
const browser = await launchPasskeyBrowser({ bypassCSP: false });
try {
  const owner = await createUser(service.deps, { role: 'owner', email: 'owner@example.com', emailVerified: true, username: 'alex' });
  const { cookie } = await signIn(service.deps, { userId: owner.id, host: 'console.localhost' });
  const site = `http://console.localhost:${port}`;
  await browser.context.addCookies([{ name: 'svc_session', value: cookie.split('=')[1]!, domain: 'console.localhost', path: '/', httpOnly: true, secure: true, sameSite: 'Lax' }]);
  const { page } = browser;
  await page.setViewportSize({ width: 1100, height: 900 });
  await page.goto(`${site}/servers`);
  await page.fill('#f-name', 'survival');
  await page.fill('#f-subdomain', 'survival');
  await page.fill('#f-display_name', 'Survival');
  await page.click('form[action="/servers"] button');
  await page.goto(`${site}/servers/survival?tab=console`);
  await page.click('button[value=wake]');
  await page.waitForFunction(() => document.getElementById('server-phase')?.textContent === 'Running', undefined, { timeout: 60_000 });
  await page.waitForFunction(() => (document.getElementById('console-out')?.textContent ?? '').includes('Done'), undefined, { timeout: 30_000 });
  await page.fill('#command', 'list');
  await page.click('#command-form button');
  await page.waitForFunction(() => /players online/.test(document.getElementById('console-out')?.textContent ?? ''), undefined, { timeout: 30_000 });
  await page.fill('#command', '');
  await page.screenshot({ path: 'docs/panel-server.png', fullPage: false });
  process.stdout.write('docs/panel-server.png\n');
} finally {
  await browser.close();
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
