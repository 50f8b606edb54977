/**
 * The compiled service as main.ts starts it, for bench/servers/memory-startup.ts on PostgreSQL:
 * the configuration from the environment, but the simulated cluster keeps its servers in
 * BENCH_STATE_FILE (main.ts keeps them only beside an embedded database, in DATA_DIR), so a fleet
 * of N servers is there at start as on the embedded default. Exits on SIGTERM like main.ts.
 */
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/lib/logger.js';
import { startService } from '../src/service.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
const service = await startService(config, log, { simulatedStateFile: process.env.BENCH_STATE_FILE });
process.once('SIGTERM', () => void service.stop().finally(() => process.exit(0)));
