import type { Queryable } from '../../../db/client.js';
import { readStored, readStoredWakePolicy, seedValue, writeValue, type WakePolicy } from '../../runtime-settings/index.js';

/** Settings of the servers feature, with the defaults of api-extensions. */
export const SERVER_SETTINGS = {
  nodeServerCap: { key: 'node_server_cap', fallback: 20 },
  wakeCooldownSeconds: { key: 'wake_cooldown_seconds', fallback: 30 },
  /** Running servers a player may hold that they woke but do not own (issue 20: the fair share). */
  wakeSharePerPlayer: { key: 'wake_share_per_player', fallback: 1 },
  /**
   * The share of the running slots (the node cap times the nodes) that one account's own servers
   * may hold, in percent, at least one server (issue 30: one player took every slot by claiming
   * unowned servers and waking them). 100 is no share; with no cap there is nothing to share.
   */
  runningSharePercent: { key: 'running_share_percent', fallback: 25 },
  /** How often the retirement sweep runs. */
  retirementSweepSeconds: { key: 'retirement_sweep_seconds', fallback: 30 },
} as const;

export const DEFAULT_IMAGE_SETTING = 'platform_default_image';

/** A positive integer setting, or its default when unset or not an integer. */
export async function integerSetting(db: Queryable, setting: { key: string; fallback: number }): Promise<number> {
  const value = (await readStored(db, setting.key))?.value;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : setting.fallback;
}

export async function stringSetting(db: Queryable, key: string): Promise<string | undefined> {
  const value = (await readStored(db, key))?.value;
  return typeof value === 'string' ? value : undefined;
}

/** Writes a setting only when it has no value yet; returns the value in force. */
export async function seedSetting(db: Queryable, key: string, value: string, now: Date): Promise<string> {
  await seedValue(db, key, value, now);
  return (await stringSetting(db, key)) ?? value;
}

export async function writeSetting(db: Queryable, key: string, value: unknown, now: Date): Promise<void> {
  await writeValue(db, key, value, now);
}

export interface WakePolicyView extends WakePolicy {
  revision: string;
  /** True once staff saved a policy; false while the defaults (`node_server_cap`, `wake_cooldown_seconds`) are in force. */
  managed: boolean;
}

/**
 * The wake policy in force, read from the database by the wake path on every replica: the policy
 * staff saved on the settings page, else the settings' defaults. `maxRunningServers` is the running
 * cap of a node (api-extensions); 0 is no cap, as the original.
 */
export async function wakePolicyInForce(db: Queryable): Promise<WakePolicyView> {
  const { policy, revision } = await readStoredWakePolicy(db);
  if (policy) return { ...policy, revision, managed: true };
  const [maxRunningServers, wakeCooldownSeconds] = await Promise.all([
    integerSetting(db, SERVER_SETTINGS.nodeServerCap),
    integerSetting(db, SERVER_SETTINGS.wakeCooldownSeconds),
  ]);
  return { maxRunningServers, wakeCooldownSeconds, revision, managed: false };
}
