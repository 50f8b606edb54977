import { z } from '@hono/zod-openapi';
import type { Queryable } from '../../db/client.js';
import { readStored, revisionText } from './revisioned.js';

export const WAKE_POLICY_KEY = 'wake_policy';

/** The original's bounds: a running cap of 0 (no cap) to 10,000, a cooldown of 0 to 3,600 s. */
export const WakePolicyFields = {
  maxRunningServers: z.number().int().min(0).max(10_000),
  wakeCooldownSeconds: z.number().int().min(0).max(3_600),
};

const StoredWakePolicy = z.object(WakePolicyFields);
export type WakePolicy = z.infer<typeof StoredWakePolicy>;

/** The saved wake policy (undefined until staff save one) and its revision. A stored value that no longer parses fails closed. */
export async function readStoredWakePolicy(db: Queryable): Promise<{ policy: WakePolicy | undefined; revision: string }> {
  const stored = await readStored(db, WAKE_POLICY_KEY);
  if (!stored) return { policy: undefined, revision: revisionText(stored) };
  const parsed = StoredWakePolicy.safeParse(stored.value);
  if (!parsed.success) throw new Error('the stored wake policy is invalid');
  return { policy: parsed.data, revision: revisionText(stored) };
}
