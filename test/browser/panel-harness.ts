import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService, type RunningService } from '../../src/service.js';
import { TEST_ENV } from '../helpers/app.js';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { captureLog, type CapturedLog } from '../helpers/log.js';
import { freePort, launchPasskeyBrowser, type PasskeyBrowser } from './browser.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: Array<{ target: string[] }>;
}

/** The service on `npm start`'s default hosts, a Chromium with the pages' CSP on, and what went wrong on its pages. */
export interface PanelRig {
  service: RunningService;
  browser: PasskeyBrowser;
  page: Page;
  captured: CapturedLog;
  panel: string;
  consoleHost: string;
  problems: string[];
  /** No console error, no failed request since the last check, and nothing serious for axe-core. */
  pageIsClean(what: string): Promise<void>;
  /** The newest code the log transport mailed. */
  lastCode(): string;
  noticeText(): Promise<string | null>;
  /** First start: the setup token redeemed on the console host, the owner's address verified. */
  becomeOwner(email: string): Promise<void>;
  /** A JSON call to the API from the page, as its own scripts make them (cookie, same origin). */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startPanelRig(): Promise<PanelRig> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'felis-panel-'));
  const env: Record<string, string> = { ...TEST_ENV };
  // The defaults `npm start` has: the .localhost hosts and their passkey relying party.
  delete (env as Partial<typeof env>).ROOT_DOMAIN;
  delete (env as Partial<typeof env>).PANEL_HOST;
  delete (env as Partial<typeof env>).CONSOLE_HOST;
  const config = loadConfig({
    ...env,
    DATABASE_URL: (await createPostgresTestDatabase()) ?? 'memory:',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    EXTERNAL_PORT: String(port),
    INTERNAL_PORT: '0',
    MAIL_TRANSPORT: 'log',
    LOG_LEVEL: 'info',
  } as NodeJS.ProcessEnv);
  const captured = captureLog('info');
  const service = await startService(config, captured.log);
  const browser = await launchPasskeyBrowser({ bypassCSP: false });
  const page = browser.page;
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} at ${page.url()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message} at ${page.url()}`));
  page.on('requestfailed', (r) => {
    // A stream closed by leaving its page, or a live poll cut short by a navigation, is not a
    // failure of the page: Chromium reports both as ERR_ABORTED.
    if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().includes('/api/v1/')) problems.push(`answer ${r.status()}: ${r.url()}`);
  });
  const panel = `http://panel.localhost:${port}`;
  const consoleHost = `http://console.localhost:${port}`;

  const rig: PanelRig = {
    service,
    browser,
    page,
    captured,
    panel,
    consoleHost,
    problems,
    async pageIsClean(what) {
      await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
        const result = await axe.run(document, { resultTypes: ['violations'] });
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) }));
      });
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious, `${what}: ${JSON.stringify(serious)}`).toEqual([]);
      expect(problems.splice(0), what).toEqual([]);
    },
    lastCode() {
      const line = captured
        .lines()
        .map((l) => String(l.mail_text ?? ''))
        .filter((t) => /code is \d+/.test(t))
        .at(-1);
      return /code is (\d+)/.exec(line ?? '')?.[1] ?? '';
    },
    noticeText: () => page.locator('main .notice').first().textContent(),
    async becomeOwner(email) {
      const token = String(captured.lines().find((l) => typeof l.setup_token === 'string')?.setup_token ?? '');
      expect(token).not.toBe('');
      await page.goto(`${consoleHost}/setup`);
      await page.fill('#f-token', token);
      await page.click('form[action="/setup"] button');
      expect(new URL(page.url()).pathname).toBe('/account');
      await page.fill('form[action="/account/email"] #f-email', email);
      await page.click('form[action="/account/email"]:has(#f-email) button');
      await page.fill('form[action="/account/email"] #f-code', rig.lastCode());
      await page.click('form[action="/account/email"]:has(#f-code) button');
      expect(await rig.noticeText()).toBe('Address verified.');
    },
    api: (method, path, body) =>
      page.evaluate(
        async ([m, p, b]) => {
          const init: RequestInit = { method: m as string, credentials: 'same-origin', headers: {} };
          if (b !== undefined) {
            (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
            init.body = JSON.stringify(b);
          }
          const res = await fetch(`/api/v1${p as string}`, init);
          const text = await res.text();
          return { status: res.status, body: text ? JSON.parse(text) : null };
        },
        [method, path, body] as const,
      ),
    async close() {
      await browser?.close();
      await service?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return rig;
}
