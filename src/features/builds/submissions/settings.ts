import type { Queryable } from '../../../db/client.js';
import { integerSetting } from '../../servers/index.js';

/** Upload limits (registry settings), with the defaults of api-extensions. */
export const UPLOAD_SETTINGS = {
  partMaxBytes: { key: 'part_max_bytes', fallback: 32 * 1024 * 1024 },
  contextMaxBytes: { key: 'context_max_bytes', fallback: 2 * 1024 * 1024 * 1024 },
} as const;

export interface UploadLimits {
  partMaxBytes: number;
  contextMaxBytes: number;
}

export async function readUploadLimits(db: Queryable): Promise<UploadLimits> {
  const [partMaxBytes, contextMaxBytes] = await Promise.all([
    integerSetting(db, UPLOAD_SETTINGS.partMaxBytes),
    integerSetting(db, UPLOAD_SETTINGS.contextMaxBytes),
  ]);
  return { partMaxBytes, contextMaxBytes };
}
