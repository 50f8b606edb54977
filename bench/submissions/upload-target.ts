/**
 * The server under test of bench/submissions/upload.ts, alone in its process: the real external
 * face (node:http, the whole pipeline) on an embedded database and a context store in a temporary
 * directory. It mints a player session and a submission, announces them over IPC, samples its own
 * memory every 50 ms, and answers `report` with the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApps } from '../../src/app/index.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { createSubmission } from '../../src/features/builds/submissions/service.js';
import { DirectoryContextStore } from '../../src/features/builds/submissions/context-store.js';
import { createLogger } from '../../src/lib/logger.js';
import { serve } from '../../src/runtime/serve.js';
import { assembleDeps } from '../../src/service.js';
import { TEST_ENV } from '../../test/helpers/app.js';
import { createUser, signIn } from '../../test/helpers/sessions.js';
import { writeSetting } from '../../src/features/servers/wakes/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'felis-upload-bench-'));
const config = loadConfig({ ...TEST_ENV, LOG_LEVEL: 'warn', DATA_DIR: dir } as NodeJS.ProcessEnv);
const log = createLogger('warn');
const database = await openDatabase({ url: 'memory:', dataDir: dir });
const deps = assembleDeps({ config, log, database, contextStore: new DirectoryContextStore(join(dir, 'contexts'), 0) });
await writeSetting(database.db, 'context_max_bytes', 2 * 1024 ** 3, new Date());
const apps = createApps(deps);
const external = await serve({ fetch: apps.external.fetch, port: 0, host: '127.0.0.1', log });
const user = await createUser(deps);
const session = await signIn(deps, { userId: user.id, host: config.panelHost });

const samples: number[] = [];
const sample = () => samples.push(process.memoryUsage().rss);
let baseline = 0;
const timer = setInterval(sample, 50);

process.on('message', async (message: { type: string }) => {
  if (message.type === 'submission') {
    const submission = await createSubmission(deps, user.id, `bench ${Date.now()}`);
    process.send!({ type: 'submission', id: submission.id });
  } else if (message.type === 'reset') {
    global.gc?.();
    samples.length = 0;
    sample();
    baseline = samples[0]!;
    process.send!({ type: 'reset' });
  } else if (message.type === 'report') {
    sample();
    process.send!({ type: 'report', baseline, max: Math.max(...samples), last: samples[samples.length - 1] });
  } else if (message.type === 'stop') {
    clearInterval(timer);
    await external.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send!({ type: 'ready', port: external.port, headers: session.headers });
