import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashStream } from '../../features/worlds/volumes/archive.js';
import { loadConfig } from '../../config.js';
import { createBackupStore } from './index.js';
import { LocalBackupStore } from './local.js';
import { S3BackupStore } from './s3.js';
import { startS3rver, type S3rverProcess } from './s3rver-process.js';
import { BackupNotFoundError, type BackupStore } from './types.js';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A stream of `bytes` in uneven chunks, as an archiver would produce it. */
function chunked(bytes: Buffer): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + ((at * 7919) % 300_000);
        yield bytes.subarray(at, at + size);
        at += size;
      }
    })(),
  );
}

function storeSuite(name: string, make: () => BackupStore) {
  describe(name, () => {
    it('stores a stream of unknown length across several parts and gives the same bytes back', async () => {
      const store = make();
      const bytes = randomBytes(12 * 1024 * 1024 + 12345);
      const { size } = await store.put('worlds/alpha/one.tar.gz', chunked(bytes));
      expect(size).toBe(bytes.length);
      expect(await hashStream(await store.get('worlds/alpha/one.tar.gz'))).toEqual({ sha256: sha(bytes), bytes: bytes.length });
    });

    it('stores an empty object', async () => {
      const store = make();
      await store.put('worlds/alpha/empty.tar.gz', Readable.from([]));
      expect((await hashStream(await store.get('worlds/alpha/empty.tar.gz'))).bytes).toBe(0);
    });

    it('lists the objects under a prefix in key order with their sizes, and nothing of a sibling prefix', async () => {
      const store = make();
      await store.put('staged/one/000000000000010', Readable.from([Buffer.alloc(5)]));
      await store.put('staged/one/000000000000000', Readable.from([Buffer.alloc(10)]));
      await store.put('staged/one-more/000000000000000', Readable.from([Buffer.alloc(1)]));
      expect(await store.list('staged/one/')).toEqual([
        { key: 'staged/one/000000000000000', size: 10 },
        { key: 'staged/one/000000000000010', size: 5 },
      ]);
      expect((await store.list('staged/')).map((o) => o.key)).toContain('staged/one-more/000000000000000');
      expect(await store.list('staged/none/')).toEqual([]);
    });

    it('answers BackupNotFoundError for a missing object, and deletes idempotently', async () => {
      const store = make();
      await store.put('worlds/alpha/gone.tar.gz', Readable.from([Buffer.from('x')]));
      await store.delete('worlds/alpha/gone.tar.gz');
      await store.delete('worlds/alpha/gone.tar.gz');
      await expect(store.get('worlds/alpha/gone.tar.gz')).rejects.toBeInstanceOf(BackupNotFoundError);
    });

    it('leaves nothing behind when the source stream fails', async () => {
      const store = make();
      const failing = Readable.from(
        (async function* () {
          yield randomBytes(6 * 1024 * 1024);
          throw new Error('the archiver failed');
        })(),
      );
      await expect(store.put('worlds/alpha/broken.tar.gz', failing)).rejects.toThrow('the archiver failed');
      await expect(store.get('worlds/alpha/broken.tar.gz')).rejects.toBeInstanceOf(BackupNotFoundError);
    });

    it('refuses keys that could leave the store', async () => {
      const store = make();
      for (const key of ['../x', '/etc/passwd', 'a/../../b', 'A/b', '']) {
        await expect(store.put(key, Readable.from([Buffer.from('x')]))).rejects.toThrow('not a store key');
      }
    });
  });
}

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-store-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

storeSuite('local directory store', () => new LocalBackupStore(tempDir()));

let s3rver: S3rverProcess;
beforeAll(async () => {
  s3rver = await startS3rver(tempDir());
});
afterAll(async () => {
  await s3rver?.stop();
});
storeSuite('S3 store against an s3rver process', () =>
  new S3BackupStore({
    endpoint: s3rver.endpoint,
    region: 'us-east-1',
    bucket: s3rver.bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    prefix: 'felis/',
  }),
);

storeSuite('S3 store made from the configuration (its SDK loaded at the first call)', () =>
  createBackupStore(
    loadConfig({
      BACKUP_S3_BUCKET: s3rver.bucket,
      BACKUP_S3_ENDPOINT: s3rver.endpoint,
      BACKUP_S3_ACCESS_KEY_ID: 'S3RVER',
      BACKUP_S3_SECRET_ACCESS_KEY: 'S3RVER',
      BACKUP_S3_PREFIX: 'configured/',
    }),
  ),
);

describe('S3 store faults', () => {
  it('fails (never hangs) when the server is gone', async () => {
    const store = new S3BackupStore({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', bucket: 'b', accessKeyId: 'k', secretAccessKey: 's' });
    await expect(store.ping()).rejects.toThrow();
    await expect(store.put('worlds/a/b.tar.gz', Readable.from([Buffer.from('x')]))).rejects.toThrow();
  });
});
