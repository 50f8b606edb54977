import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './lib/logger.js';
import { startService } from './service.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`felis: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const service = await startService(config, log);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal (a relaying wrapper, a repeated Ctrl-C) must not kill the drain half-way.
    if (stopping) return void log.info({ signal }, 'already shutting down');
    stopping = true;
    log.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((err: unknown) => {
  process.stderr.write(`felis: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
