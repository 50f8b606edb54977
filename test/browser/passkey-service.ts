import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { startService, type RunningService } from '../../src/service.js';
import { TEST_ENV } from '../helpers/app.js';
import { createPostgresTestDatabase } from '../helpers/database.js';
import { freePort, launchPasskeyBrowser, type PasskeyBrowser } from './browser.js';

export interface PasskeyService {
  service: RunningService;
  browser: PasskeyBrowser;
  /** `http://localhost:PORT`: a secure context, and the relying party's only origin. */
  origin: string;
}

/**
 * For a suite: the service on a real port as the relying party `localhost` (on the run's database
 * kind) and a headless Chromium with a virtual authenticator; both closed after the suite.
 */
export function usePasskeyService(): () => PasskeyService {
  let fixture: PasskeyService | undefined;
  beforeAll(async () => {
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    const config = loadConfig({
      ...TEST_ENV,
      DATABASE_URL: (await createPostgresTestDatabase()) ?? 'memory:',
      HOST: '127.0.0.1',
      EXTERNAL_PORT: String(port),
      INTERNAL_PORT: '0',
      PANEL_HOST: 'localhost',
      CONSOLE_HOST: 'console.localhost',
      WEBAUTHN_RP_ID: 'localhost',
      WEBAUTHN_ORIGINS: origin,
      LOG_LEVEL: 'error',
    } as NodeJS.ProcessEnv);
    const service = await startService(config, createLogger('error'));
    fixture = { service, browser: await launchPasskeyBrowser(), origin };
  });
  afterAll(async () => {
    await fixture?.browser.close();
    await fixture?.service.stop();
  });
  return () => {
    if (!fixture) throw new Error('usePasskeyService(): started in beforeAll');
    return fixture;
  };
}
