/**
 * Sends a large file (default 512 MiB: BENCH_UPLOAD_MIB) as an upload session in 32 MiB parts, lands
 * it in a world folder with every part re-hashed, then extracts a zip of the same size (stored
 * entries of 16 MiB, written here by streaming) through the real engines, and records MiB/s and the
 * process's peak RSS. Memory must stay flat: no stage holds a part or a file whole.
 *
 *   npx tsx bench/worlds/uploads.ts
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { SimulatedWorldFolders } from '../../src/adapters/cluster/simulated-worlds.js';
import { LocalBackupStore } from '../../src/adapters/backup-store/local.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { users } from '../../src/db/schema/accounts.js';
import { uploadWorldFile } from '../../src/features/worlds/volumes/files.js';
import { JobTracker } from '../../src/features/worlds/volumes/runtime.js';
import { unzipInWorld } from '../../src/features/worlds/uploads/unzip.js';
import { appendPart, beginUpload, stagedBytes } from '../../src/features/worlds/uploads/sessions.js';
import { createLogger } from '../../src/lib/logger.js';
import { assembleDeps } from '../../src/service.js';

const MIB = 1024 * 1024;
const PART = 32 * MIB;
const fileMib = Number(process.env.BENCH_UPLOAD_MIB ?? 512);

/** One part's bytes as a request body would bring them: 64 KiB chunks, never the part whole. */
async function* partBody(seed: Buffer, bytes: number): AsyncGenerator<Uint8Array> {
  for (let sent = 0; sent < bytes; sent += 64 * 1024) {
    seed[0] = (seed[0]! + 1) & 0xff;
    yield Buffer.from(seed.subarray(0, Math.min(64 * 1024, bytes - sent)));
  }
}

/** A zip of stored 16 MiB entries, streamed to disk (CRCs computed as it goes). */
async function writeZip(path: string, mib: number): Promise<void> {
  const out = createWriteStream(path);
  const write = async (b: Buffer) => {
    if (!out.write(b)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  const centrals: Buffer[] = [];
  let offset = 0;
  const chunk = randomBytes(MIB);
  for (let f = 0; f < Math.ceil(mib / 16); f++) {
    const name = Buffer.from(`region/r.${f}.0.mca`);
    const size = 16 * MIB;
    let crc = 0;
    for (let m = 0; m < 16; m++) {
      chunk[0] = (f * 16 + m) & 0xff;
      crc = crc32(chunk, crc);
    }
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(size, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    await write(Buffer.concat([local, name]));
    for (let m = 0; m < 16; m++) {
      chunk[0] = (f * 16 + m) & 0xff;
      await write(Buffer.from(chunk));
    }
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(size, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + size;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  await write(Buffer.concat([directory, end]));
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

async function main() {
  const root = mkdtempSync(join(tmpdir(), 'felis-bench-uploads-'));
  try {
    const folders = new SimulatedWorldFolders(join(root, 'worlds'));
    const config = loadConfig({ DATABASE_URL: 'memory:', DATA_DIR: root, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv);
    const database = await openDatabase({ url: 'memory:', dataDir: root });
    const worlds = { store: new LocalBackupStore(join(root, 'backups')), folders, jobs: new JobTracker() };
    const deps = assembleDeps({ config, log: createLogger('warn'), database, worlds });
    const now = new Date();
    const [user] = await database.db.insert(users).values({ username: 'bench', createdAt: now, updatedAt: now }).returning();
    const folder = await folders.folder('bench');
    const size = fileMib * MIB;
    global.gc?.();
    const baseRss = process.memoryUsage().rss;
    peakRss = baseRss;

    let started = performance.now();
    let session = await beginUpload(deps, user!.id, 'bench', 'big.bin', size);
    const seed = randomBytes(64 * 1024);
    while (session.received < size) session = await appendPart(deps, session, session.received, partBody(seed, Math.min(PART, size - session.received)));
    const partsSeconds = (performance.now() - started) / 1000;
    const partsPeak = peakRss;

    peakRss = process.memoryUsage().rss;
    started = performance.now();
    await uploadWorldFile(folder, 'big.bin', stagedBytes(deps, session.id, session.parts, async () => {}), { overwrite: false });
    const landSeconds = (performance.now() - started) / 1000;
    const landPeak = peakRss;

    await writeZip(join(folder, 'pack.zip'), fileMib);
    global.gc?.();
    peakRss = process.memoryUsage().rss;
    started = performance.now();
    const unzipped = await unzipInWorld(folder, 'pack.zip', { overwrite: false, limits: { maxBytes: 2 * size, maxEntries: 1000 }, workId: 'bench' });
    const unzipSeconds = (performance.now() - started) / 1000;
    const unzipPeak = peakRss;

    console.log(
      JSON.stringify(
        {
          file_mib: fileMib,
          parts: session.parts.length,
          parts_seconds: +partsSeconds.toFixed(1),
          parts_mib_per_s: +(fileMib / partsSeconds).toFixed(1),
          land_seconds: +landSeconds.toFixed(1),
          land_mib_per_s: +(fileMib / landSeconds).toFixed(1),
          unzip_files: unzipped.files,
          unzip_seconds: +unzipSeconds.toFixed(1),
          unzip_mib_per_s: +(fileMib / unzipSeconds).toFixed(1),
          rss_before_mib: +(baseRss / MIB).toFixed(0),
          parts_peak_rss_mib: +(partsPeak / MIB).toFixed(0),
          land_peak_rss_mib: +(landPeak / MIB).toFixed(0),
          unzip_peak_rss_mib: +(unzipPeak / MIB).toFixed(0),
        },
        null,
        2,
      ),
    );
    await database.close();
  } finally {
    clearInterval(sampler);
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
