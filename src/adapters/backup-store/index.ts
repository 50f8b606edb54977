import { join } from 'node:path';
import type { Config } from '../../config.js';
import { LocalBackupStore } from './local.js';
import type { S3BackupStoreOptions } from './s3.js';
import type { BackupStore } from './types.js';

/** S3 when a bucket is configured, else a directory under DATA_DIR. */
export function createBackupStore(config: Config): BackupStore {
  return s3Store(config) ?? new LocalBackupStore(join(config.dataDir, 'backups'));
}

/**
 * Where bytes in flight live (world upload parts, submission contexts): what every replica reads,
 * so a part, a commit or a download may reach any of them. The bucket (under `<prefix>staging/`)
 * when one is configured, else `DATA_DIR/uploads` (the embedded default: one process).
 */
export function createStagingStore(config: Config): BackupStore {
  return s3Store(config, 'staging/') ?? new LocalBackupStore(join(config.dataDir, 'uploads'));
}

function s3Store(config: Config, under = ''): BackupStore | undefined {
  if (config.backupS3Bucket) {
    return lazyS3Store({
      bucket: config.backupS3Bucket,
      region: config.backupS3Region,
      endpoint: config.backupS3Endpoint,
      accessKeyId: config.backupS3AccessKeyId,
      secretAccessKey: config.backupS3SecretAccessKey,
      prefix: `${config.backupS3Prefix ?? ''}${under}`,
    });
  }
  return undefined;
}

/**
 * The S3 store with its SDK loaded at the first call: the AWS SDK is about 66 MiB of resident
 * memory and a second of imports (docs/notes/issue-29-speed.md) that a service without a bucket
 * must not pay, and one with a bucket pays at its first backup, upload or probe.
 */
function lazyS3Store(options: S3BackupStoreOptions): BackupStore {
  let made: Promise<BackupStore> | undefined;
  const store = () => (made ??= import('./s3.js').then(({ S3BackupStore }) => new S3BackupStore(options)));
  return {
    kind: 's3',
    put: async (key, body) => (await store()).put(key, body),
    get: async (key) => (await store()).get(key),
    delete: async (key) => (await store()).delete(key),
    ping: async () => (await store()).ping(),
    list: async (prefix) => (await store()).list(prefix),
  };
}
