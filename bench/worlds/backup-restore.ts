/**
 * Backs up and restores a large world (default 1 GiB: BENCH_WORLD_MIB) through the real engine —
 * tar.gz streamed through sha-256 into the local store (or S3 with BENCH_S3=1 against an s3rver
 * process), read back and re-hashed, then unpacked into staging and swapped in — and records
 * MiB/s and the process's peak RSS. Memory must stay flat: the peak is independent of the world's size.
 *
 *   npm run bench:worlds-engine
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBackupStore } from '../../src/adapters/backup-store/local.js';
import { S3BackupStore } from '../../src/adapters/backup-store/s3.js';
import { startS3rver } from '../../src/adapters/backup-store/s3rver-process.js';
import type { BackupStore } from '../../src/adapters/backup-store/types.js';
import { SimulatedWorldFolders } from '../../src/adapters/cluster/simulated-worlds.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { backUpFolder, restoreFolder } from '../../src/features/worlds/backups/folders.js';
import { JobTracker } from '../../src/features/worlds/volumes/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { assembleDeps } from '../../src/service.js';
import { writeWorld } from './world-files.js';

const MIB = 1024 * 1024;
const worldMib = Number(process.env.BENCH_WORLD_MIB ?? 1024);

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

async function main() {
  const root = mkdtempSync(join(tmpdir(), 'felis-bench-worlds-'));
  const s3 = process.env.BENCH_S3 === '1' ? await startS3rver(join(root, 's3')) : undefined;
  try {
    const store: BackupStore = s3
      ? new S3BackupStore({ endpoint: s3.endpoint, region: 'us-east-1', bucket: s3.bucket, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })
      : new LocalBackupStore(join(root, 'backups'));
    const folders = new SimulatedWorldFolders(join(root, 'worlds'));
    const config = loadConfig({ DATABASE_URL: 'memory:', DATA_DIR: root, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv);
    const database = await openDatabase({ url: 'memory:', dataDir: root });
    const deps = assembleDeps({ config, log: createLogger('warn'), database, worlds: { store, folders, jobs: new JobTracker() } });
    const folder = await folders.folder('bench');
    await writeWorld(folder, worldMib);
    global.gc?.();
    const baseRss = process.memoryUsage().rss;
    peakRss = baseRss;

    let started = performance.now();
    const backup = await backUpFolder(deps, { serverName: 'bench', folder, reason: 'manual' });
    const backupSeconds = (performance.now() - started) / 1000;
    const backupPeak = peakRss;

    peakRss = process.memoryUsage().rss;
    started = performance.now();
    await restoreFolder(deps, backup, folder, 'bench-restore');
    const restoreSeconds = (performance.now() - started) / 1000;
    const restorePeak = peakRss;

    const result = {
      store: store.kind,
      world_mib: worldMib,
      archive_mib: +(backup.sizeBytes / MIB).toFixed(1),
      backup_seconds: +backupSeconds.toFixed(1),
      backup_mib_per_s: +(worldMib / backupSeconds).toFixed(1),
      restore_seconds: +restoreSeconds.toFixed(1),
      restore_mib_per_s: +(worldMib / restoreSeconds).toFixed(1),
      rss_before_mib: +(baseRss / MIB).toFixed(0),
      backup_peak_rss_mib: +(backupPeak / MIB).toFixed(0),
      restore_peak_rss_mib: +(restorePeak / MIB).toFixed(0),
      corrupt: backup.corrupt,
      verified: backup.verifiedAt !== null,
    };
    console.log(JSON.stringify(result, null, 2));
    await database.close();
  } finally {
    clearInterval(sampler);
    await s3?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
