import { loadConfig } from '../../src/config.js';
import { startService, type RunningService, type StartOptions } from '../../src/service.js';
import { TEST_ENV } from './app.js';
import { captureLog, type CapturedLog } from './log.js';

/** The real service as main.ts starts it, on 127.0.0.1 with port 0 for both faces and a captured log. */
export async function startTestService(
  env: Record<string, string | undefined> = {},
  options: StartOptions = {},
): Promise<RunningService & { captured: CapturedLog }> {
  const config = loadConfig({ ...TEST_ENV, EXTERNAL_PORT: '0', INTERNAL_PORT: '0', ...env } as NodeJS.ProcessEnv);
  const captured = captureLog(config.logLevel);
  const service = await startService(config, captured.log, options);
  return Object.assign(service, { captured });
}
