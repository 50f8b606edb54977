import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type CDPSession, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export { freePort } from '../helpers/ports.js';

export interface PasskeyBrowser {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  close(): Promise<void>;
}

/**
 * Headless Debian Chromium with a CDP virtual authenticator (a CTAP2 platform authenticator that
 * holds resident keys and verifies its user), as in the environment notes.
 */
export async function launchPasskeyBrowser(options: { bypassCSP?: boolean } = {}): Promise<PasskeyBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), 'felis-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    // The pages are the API's JSON answers, whose CSP (default-src 'none') would forbid the
    // script's fetch calls; the script plays the panel, which is served from elsewhere.
    // (The served pages' tests keep the CSP on: a violation is a console error there.)
    bypassCSP: options.bypassCSP ?? true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // The service listens on 127.0.0.1; the default hosts are panel. and console.localhost.
      '--host-resolver-rules=MAP localhost 127.0.0.1, MAP *.localhost 127.0.0.1',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    context,
    page,
    cdp,
    authenticatorId,
    close: async () => {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
