import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LocalBackupStore } from '../../../adapters/backup-store/local.js';
import { createTestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { recoverWorldFolder, runVolumeStep } from '../volumes/steps.js';
import { BackupCorruptError, backUpFolder, restoreFolder } from './folders.js';
import { findBackup, verifyBackup } from './records.js';
import { seedWorld, testWorlds, useTempDir } from '../../../../test/helpers/worlds.js';

/** Every regular file under a folder, path → bytes (what a restore must give back). */
function snapshot(folder: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(join(folder, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(out, snapshot(folder, rel));
    else if (entry.isFile()) out[rel] = readFileSync(join(folder, rel)).toString('base64');
  }
  return out;
}

describe('world archives', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  async function setUp() {
    const root = tempDir();
    const store = new LocalBackupStore(join(root, 'backups'));
    const worlds = testWorlds(root, store);
    const deps = createTestDeps(database(), { overrides: { worlds } });
    const folder = await worlds.folders.folder('alpha');
    const seeded = await seedWorld(folder);
    return { deps, worlds, folder, seeded, root, stored: (key: string) => join(store.root, key) };
  }

  it('archives a real world, skipping and counting the link, the FIFO and the socket, and verifies the read-back', async () => {
    const { deps, folder, seeded, stored } = await setUp();
    const backup = await backUpFolder(deps, { serverName: 'alpha', folder, reason: 'manual' });
    await seeded.close();
    expect(backup).toMatchObject({ status: 'present', corrupt: false, skippedEntries: seeded.skippable, reason: 'manual' });
    expect(backup.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(backup.verifiedAt).toEqual(deps.clock.now());
    expect(backup.expiresAt.getTime() - backup.createdAt.getTime()).toBe(30 * 24 * 3600 * 1000);
    expect((await stat(stored(backup.storageKey))).size).toBe(backup.sizeBytes);
  });

  it('flags a backup whose archive lost a byte, and refuses to restore it', async () => {
    const { deps, folder, seeded, stored } = await setUp();
    await seeded.close();
    const before = snapshot(folder);
    const backup = await backUpFolder(deps, { serverName: 'alpha', folder, reason: 'manual' });
    const path = stored(backup.storageKey);
    const file = await open(path, 'r+');
    const byte = Buffer.alloc(1);
    await file.read(byte, 0, 1, 100);
    byte[0] = byte[0]! ^ 0xff;
    await file.write(byte, 0, 1, 100);
    await file.close();

    const checked = await verifyBackup(deps, backup);
    expect(checked.corrupt).toBe(true);
    await expect(restoreFolder(deps, checked, folder, 'job-1')).rejects.toBeInstanceOf(BackupCorruptError);
    expect(snapshot(folder)).toEqual(before);
  });

  it('marks corrupt at restore an archive that changed after its last verification, leaving the world as it was', async () => {
    const { deps, folder, seeded, stored } = await setUp();
    await seeded.close();
    const backup = await backUpFolder(deps, { serverName: 'alpha', folder, reason: 'manual' });
    writeFileSync(join(folder, 'server.properties'), 'motd=changed since\n');
    const before = snapshot(folder);
    const path = stored(backup.storageKey);
    const bytes = readFileSync(path);
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0x01;
    writeFileSync(path, bytes);

    await expect(restoreFolder(deps, backup, folder, 'job-2')).rejects.toThrow();
    expect(snapshot(folder)).toEqual(before);
    expect(readdirSync(join(folder, '..'))).toEqual(['alpha']);
  });

  it('gives back the same bytes on restore', async () => {
    const { deps, folder, seeded } = await setUp();
    await seeded.close();
    const original = snapshot(folder);
    const backup = await backUpFolder(deps, { serverName: 'alpha', folder, reason: 'manual' });
    writeFileSync(join(folder, 'server.properties'), 'motd=griefed\n');
    writeFileSync(join(folder, 'world', 'new-file'), 'not in the backup');
    await restoreFolder(deps, backup, folder, 'job-3');
    expect(snapshot(folder)).toEqual(original);
    expect(readdirSync(join(folder, '..'))).toEqual(['alpha']);
  });

  it('leaves the old world intact when a restore is killed halfway, and a retry succeeds', async () => {
    const { deps, folder, seeded, stored } = await setUp();
    await seeded.close();
    const backup = await backUpFolder(deps, { serverName: 'alpha', folder, reason: 'manual' });
    writeFileSync(join(folder, 'server.properties'), 'motd=the world as it is now\n');
    const now = snapshot(folder);

    // The store's stream breaks off after its first 4 KiB, as a killed job's would.
    const archive = readFileSync(stored(backup.storageKey));
    const realGet = deps.worlds.store.get.bind(deps.worlds.store);
    deps.worlds.store.get = async () =>
      Readable.from(
        (async function* () {
          yield archive.subarray(0, 4096);
          throw new Error('killed');
        })(),
      );
    await expect(restoreFolder(deps, backup, folder, 'job-4')).rejects.toThrow('killed');
    expect(snapshot(folder)).toEqual(now);
    expect(readdirSync(join(folder, '..'))).toEqual(['alpha']);
    expect((await findBackup(deps, backup.id))!.corrupt).toBe(false);

    deps.worlds.store.get = realGet;
    await restoreFolder(deps, backup, folder, 'job-5');
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=A Felis world\nmax-players=20\n');
  });

  it('a restore whose archive fails at its last bytes says backup_corrupt every time: the cleanup of its staging folder outlasts the unpacker\'s last writes', async () => {
    const { deps, folder, seeded, stored } = await setUp();
    await seeded.close();
    // A region file big enough that the unpacker is still writing it when the gzip trailer fails.
    const region = Buffer.alloc(300 * 1024);
    for (let i = 0; i < region.length; i++) region[i] = (i * 2654435761) >>> 24;
    writeFileSync(join(folder, 'world', 'r.0.0.mca'), region);
    const backup = await backUpFolder(deps, { serverName: 'alpha', folder, reason: 'manual' });
    const before = snapshot(folder);
    const path = stored(backup.storageKey);
    const bytes = readFileSync(path);
    bytes[bytes.length - 9] = bytes[bytes.length - 9]! ^ 0xff;
    writeFileSync(path, bytes);

    // Before the fix the staging folder's removal raced the unpacker's pending writes about once in
    // fifty restores (ENOTEMPTY), and that error replaced the archive's: "the job failed".
    const codes = new Map<string, number>();
    for (let i = 0; i < 150; i++) {
      const outcome = await runVolumeStep(deps.worlds.store, folder, { op: 'restore', key: backup.storageKey, sha256: backup.sha256! }, { tag: `job-${i}` });
      const code = outcome.ok ? 'ok' : outcome.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect(Object.fromEntries(codes)).toEqual({ backup_corrupt: 150 });
    expect(snapshot(folder)).toEqual(before);
    await recoverWorldFolder(folder);
    expect(readdirSync(join(folder, '..'))).toEqual(['alpha']);
  });

  it('puts back a world a dead restore had moved aside, and clears its staging folder', async () => {
    const { folder, seeded, root } = await setUp();
    await seeded.close();
    const original = snapshot(folder);
    const { renameSync } = await import('node:fs');
    renameSync(folder, `${folder}.previous-deadjob`);
    mkdirSync(`${folder}.restore-deadjob`);
    await recoverWorldFolder(folder);
    expect(readdirSync(join(root, 'worlds'))).toEqual(['alpha']);
    expect(snapshot(folder)).toEqual(original);
  });
});
