import type { Queryable } from '../../db/client.js';
import { readStored } from './revisioned.js';

/**
 * The quota of an account staff never gave one (no `user_quotas` row): each limit a row of the
 * `settings` table named after the quota's own field (`default_max_servers`, …), a whole number,
 * or JSON null for unlimited. Until issue 30 a new account was unlimited, so one player could claim
 * every unowned server; the default bounds the servers, and leaves the resources to the node's
 * running share (servers' `running_share_percent`) unless staff set them.
 */
export const QUOTA_DEFAULTS = {
  max_servers: { key: 'default_max_servers', fallback: 3 },
  max_cpu_milli: { key: 'default_max_cpu_milli', fallback: null },
  max_memory_mb: { key: 'default_max_memory_mb', fallback: null },
  max_storage_gb: { key: 'default_max_storage_gb', fallback: null },
} as const satisfies Record<string, { key: string; fallback: number | null }>;

export type QuotaLimits = { [K in keyof typeof QUOTA_DEFAULTS]: number | null };

const MAX_LIMIT = 2_147_483_647;

/** One default in force: the stored whole number or null, else its fallback (a value that is neither is not ours to guess). */
async function defaultLimit(db: Queryable, setting: { key: string; fallback: number | null }): Promise<number | null> {
  const stored = await readStored(db, setting.key);
  if (!stored) return setting.fallback;
  const { value } = stored;
  if (value === null) return null;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_LIMIT ? value : setting.fallback;
}

/** The quota of an account without its own. */
export async function readQuotaDefaults(db: Queryable): Promise<QuotaLimits> {
  const [max_servers, max_cpu_milli, max_memory_mb, max_storage_gb] = await Promise.all([
    defaultLimit(db, QUOTA_DEFAULTS.max_servers),
    defaultLimit(db, QUOTA_DEFAULTS.max_cpu_milli),
    defaultLimit(db, QUOTA_DEFAULTS.max_memory_mb),
    defaultLimit(db, QUOTA_DEFAULTS.max_storage_gb),
  ]);
  return { max_servers, max_cpu_milli, max_memory_mb, max_storage_gb };
}
