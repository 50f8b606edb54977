import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/service.js';
import type { CapturedLog } from '../helpers/log.js';
import { createUser } from '../helpers/sessions.js';
import { startPanelRig, type PanelRig } from './panel-harness.js';

/**
 * The served panel and operator console in a real headless Chromium, on the default hosts
 * (`panel.localhost`, `console.localhost`) with their CSP on: one browser, the pages visited in
 * sequence as a new owner and a player would. Each page renders with no console error and no
 * failed request, axe-core finds nothing serious or critical, and its main action works.
 */
describe('the panel and the operator console in a real browser', { timeout: 300_000 }, () => {
  let rig: PanelRig;
  let service: RunningService;
  let page: Page;
  let captured: CapturedLog;
  let panel: string;
  let consoleHost: string;
  let problems: string[];

  beforeAll(async () => {
    rig = await startPanelRig();
    ({ service, page, captured, panel, consoleHost, problems } = rig);
  });
  afterAll(async () => {
    await rig?.close();
  });

  const pageIsClean = (what: string) => rig.pageIsClean(what);
  const lastCode = () => rig.lastCode();
  const noticeText = () => rig.noticeText();

  it('leads a first start to the setup page, makes the owner, who verifies an address and creates, fills and wakes a server', async () => {
    await page.goto(`${panel}/`);
    expect(new URL(page.url()).pathname).toBe('/setup');
    await pageIsClean('setup');

    const token = String(captured.lines().find((l) => typeof l.setup_token === 'string')?.setup_token ?? '');
    expect(token).not.toBe('');
    // A wrong token is refused beside its field.
    await page.goto(`${consoleHost}/setup`);
    await page.fill('#f-token', 'not-the-token');
    await page.click('form[action="/setup"] button');
    expect(await page.locator('#f-token-error').textContent()).not.toBe('');
    expect(await page.getAttribute('#f-token', 'aria-invalid')).toBe('true');
    problems.splice(0); // the refusal's own 400 page
    await page.fill('#f-token', token);
    await page.click('form[action="/setup"] button');
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await noticeText()).toContain('You are the owner');
    await pageIsClean('account after setup');

    await page.fill('form[action="/account/email"] #f-email', 'owner@example.com');
    await page.click('form[action="/account/email"]:has(#f-email) button');
    expect(await noticeText()).toContain('on its way');
    await page.fill('form[action="/account/email"] #f-code', lastCode());
    await page.click('form[action="/account/email"]:has(#f-code) button');
    expect(await noticeText()).toBe('Address verified.');

    // The create form: a bad name is answered beside the name field.
    await page.goto(`${consoleHost}/servers`);
    await pageIsClean('servers');
    await page.fill('#f-name', 'Bad Name');
    await page.fill('#f-subdomain', 'survival');
    await page.click('form[action="/servers"] button');
    expect(await page.locator('#f-name-error').textContent()).toBeTruthy();
    problems.splice(0); // the form's 400 page itself
    await page.fill('#f-name', 'survival');
    await page.click('form[action="/servers"] button');
    expect(new URL(page.url()).pathname).toBe('/servers/survival');
    expect(await page.locator('#server-phase').textContent()).toBe('Stopped');
    await pageIsClean('server overview');

    // An upload in parts lands a file (three parts of 1 KiB).
    await page.goto(`${consoleHost}/servers/survival?tab=files`);
    await pageIsClean('files');
    await page.evaluate(() => {
      document.getElementById('upload-form')!.dataset.part = '1024';
    });
    await page.setInputFiles('#upload-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('x'.repeat(3000)) });
    await page.click('#upload-form button');
    await page.waitForURL(/done=Uploaded/);
    // The commit is an operation on the world: the listing shows the file once it is done.
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('main table').first().textContent();
      }, { timeout: 30_000 })
      .toMatch(/notes\.txt3000/);

    for (const tab of ['schedules', 'settings', 'players', 'backups']) {
      await page.goto(`${consoleHost}/servers/survival?tab=${tab}`);
      await pageIsClean(`server ${tab}`);
    }

    // A wake changes the shown phase, without a reload.
    await page.goto(`${consoleHost}/servers/survival?tab=console`);
    await page.click('form[action="/servers/survival/power"] button[value=wake]');
    expect(await noticeText()).toBe('Waking up.');
    await page.waitForFunction(() => document.getElementById('server-phase')?.textContent === 'Running', undefined, { timeout: 60_000 });
    // The live console shows a command's output.
    await page.fill('#command', '/list');
    await page.click('#command-form button');
    await page.waitForFunction(() => /players online/.test(document.getElementById('console-out')?.textContent ?? ''), undefined, { timeout: 30_000 });
    await pageIsClean('server console');

    await page.click('form[action="/servers/survival/power"] button[value=stop]');
    expect(await noticeText()).toBe('Stopping.');
    await page.waitForFunction(() => document.getElementById('server-phase')?.textContent === 'Stopped', undefined, { timeout: 60_000 });
    await page.goto(`${consoleHost}/servers/survival?tab=backups`);
    await page.click('form[action="/servers/survival/do/backup"] button');
    expect(await noticeText()).toBe('Backing up.');
    await pageIsClean('backups');
  });

  it('serves the staff pages on the console host, each clean', async () => {
    await page.goto(`${consoleHost}/staff`);
    await pageIsClean('staff');
    const sections = await page.locator('main a[href^="/staff/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
    expect(sections.length).toBeGreaterThan(10);
    for (const href of sections) {
      const res = await page.goto(`${consoleHost}${href}`);
      expect(res?.status(), href).toBe(200);
      await pageIsClean(href);
    }
    await page.goto(`${consoleHost}/staff/users`);
    await page.locator('main table a').first().click();
    expect(await page.locator('h1').textContent()).toMatch(/^User /);
    await pageIsClean('user detail');
  });

  it('signs a player in on the panel host by e-mailed code, adds a passkey, and signs in with it', async () => {
    const email = 'player@example.com';
    await createUser(service.deps, { email, emailVerified: true });
    await page.goto(`${panel}/sign-in`);
    await pageIsClean('sign-in');
    await page.fill('#f-email', email);
    await page.click('form[action="/sign-in"] button');
    await page.fill('#f-code', lastCode());
    await page.click('form[action="/sign-in"] button');
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.locator('h1').textContent()).toBe('Dashboard');
    await pageIsClean('dashboard');
    // No staff pages offered on the panel host.
    expect(await page.locator('nav a[href="/staff"]').count()).toBe(0);

    await page.goto(`${panel}/account`);
    await page.fill('#passkey-add #f-name', 'Laptop');
    await page.click('#passkey-add button');
    await page.waitForURL(/done=Passkey/);
    expect(await page.locator('main table').first().textContent()).toContain('Laptop');
    await pageIsClean('account with a passkey');

    await page.click('nav form[action="/sign-out"] button');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.click('#passkey-sign-in');
    await page.waitForURL(`${panel}/`);
    expect(await page.locator('h1').textContent()).toBe('Dashboard');
    await pageIsClean('dashboard after a passkey sign-in');
    await page.goto(`${panel}/submissions`);
    await pageIsClean('submissions');
  });
});
