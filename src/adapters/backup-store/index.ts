import { join } from 'node:path';
import type { Config } from '../../config.js';
import { LocalBackupStore } from './local.js';
import { S3BackupStore } from './s3.js';
import type { BackupStore } from './types.js';

/** S3 when a bucket is configured, else a directory under DATA_DIR. */
export function createBackupStore(config: Config): BackupStore {
  if (config.backupS3Bucket) {
    return new S3BackupStore({
      bucket: config.backupS3Bucket,
      region: config.backupS3Region,
      endpoint: config.backupS3Endpoint,
      accessKeyId: config.backupS3AccessKeyId,
      secretAccessKey: config.backupS3SecretAccessKey,
      prefix: config.backupS3Prefix,
    });
  }
  return new LocalBackupStore(join(config.dataDir, 'backups'));
}
