import { join } from 'node:path';
import type { Config } from '../../config.js';
import { LocalBackupStore } from './local.js';
import { S3BackupStore } from './s3.js';
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

function s3Store(config: Config, under = ''): S3BackupStore | undefined {
  if (config.backupS3Bucket) {
    return new S3BackupStore({
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
