import type { Queryable } from '../../db/client.js';
import { integerSetting } from '../servers/index.js';

/**
 * Settings of world uploads and unzips (registry settings), with their defaults. `part_max_bytes`
 * is the same setting the context upload reads: one part size for every upload in parts.
 */
export const WORLD_UPLOAD_SETTINGS = {
  partMaxBytes: { key: 'part_max_bytes', fallback: 32 * 1024 * 1024 },
  /** A session untouched this long is dropped with its staged bytes (the original's 6 h). */
  sessionIdleSeconds: { key: 'upload_session_idle_seconds', fallback: 6 * 60 * 60 },
  /** Open sessions per account: each reserves its whole size on the staging disk. */
  sessionsPerUser: { key: 'upload_sessions_per_user', fallback: 4 },
  /** The most an unzip may write, summed over its entries' declared sizes (zip bombs). */
  unzipMaxBytes: { key: 'unzip_max_bytes', fallback: 8 * 1024 * 1024 * 1024 },
  /** The most entries an unzip takes, folders included. */
  unzipMaxEntries: { key: 'unzip_max_entries', fallback: 100_000 },
} as const;

export type WorldUploadSetting = keyof typeof WORLD_UPLOAD_SETTINGS;

export async function uploadSetting(db: Queryable, name: WorldUploadSetting): Promise<number> {
  return integerSetting(db, WORLD_UPLOAD_SETTINGS[name]);
}
