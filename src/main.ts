import { ConfigError, loadConfig, pageUrl, type Config } from './config.js';
import { createLogger, type Logger } from './lib/logger.js';
import { isDriverTypeFetchFailure, startService } from './service.js';
import { refuseEmbeddedInKubernetes, startupFailureLine } from './startup-failure.js';

let config: Config | undefined;

async function main(): Promise<void> {
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`felis: ${startupFailureLine(err)}\n`);
      process.exit(2);
    }
    throw err;
  }
  refuseEmbeddedInKubernetes(config, process.env);
  const log = createLogger(config.logLevel);
  // The database driver's one rejection nobody can catch (src/db/driver-faults.ts) is logged; any
  // other unhandled rejection still ends the process, as Node's default does.
  process.on('unhandledRejection', (reason) => {
    if (!isDriverTypeFetchFailure(reason)) throw reason;
    log.warn({ err: reason, dependency: 'database' }, 'a database connection failed as it opened');
  });
  // The handlers go in before the start: a signal while the service starts (an owner token still
  // being minted after 'listening', a slow embedded database) stops it once it has started, rather
  // than killing it with the default action half-way through writing its database.
  const starting = startService(config, log);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal (a relaying wrapper, a repeated Ctrl-C) must not kill the drain half-way.
    if (stopping) return void log.info({ signal }, 'already shutting down');
    stopping = true;
    log.info({ signal }, 'shutting down');
    // A start that fails is reported (and exits) by main's own catch.
    starting.then(
      (service) =>
        service.stop().then(
          () => exitAfterLog(log, 0),
          (err: unknown) => {
            log.error({ err }, 'shutdown failed');
            exitAfterLog(log, 1);
          },
        ),
      () => undefined,
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const service = await starting;
  // For a person at a terminal: the commands to paste while the owner is still in setup (a
  // collected log has them in the JSON line's `next`).
  const pages = {
    panel: config.panelHost ? pageUrl(config.panelHost, service.external.port) : undefined,
    console: config.consoleHost ? pageUrl(config.consoleHost, service.external.port) : undefined,
  };
  log.info(pages, 'the pages');
  if (process.stderr.isTTY && (pages.panel || pages.console)) {
    process.stderr.write(`felis: the panel is at ${pages.panel ?? '(no PANEL_HOST)'}, the operator console at ${pages.console ?? '(no CONSOLE_HOST)'}\n`);
  }
  if (service.setupHint && process.stderr.isTTY) process.stderr.write(`${service.setupHint}\n`);
}

/**
 * Exits once the log's last lines ('stopped') are written: the destination is asynchronous, and an
 * exit does not always wait for it (seen under Bun). A destination that never drains gets 2 s.
 */
function exitAfterLog(log: Logger, code: number): void {
  const timer = setTimeout(() => process.exit(code), 2000);
  log.flush(() => {
    clearTimeout(timer);
    process.exit(code);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`felis: ${startupFailureLine(err, config?.logLevel)}\n`);
  process.exit(1);
});
