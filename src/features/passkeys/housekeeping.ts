import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import type { Deps } from '../../deps.js';
import { HOUSEKEEPING_INTERVAL_MS } from '../accounts/index.js';
import { reapExpiredCeremonies } from './ceremonies.js';

/**
 * Deletes expired WebAuthn ceremonies, on the accounts housekeeping period, on one replica: a
 * sign-in or a registration begun and never finished leaves one behind.
 */
export function passkeyHousekeepingTask(deps: Pick<Deps, 'database' | 'clock' | 'log'>, replica: string): BackgroundTask {
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    {
      name: 'passkeys_housekeeping',
      replicas: 'one',
      intervalMs: HOUSEKEEPING_INTERVAL_MS,
      round: async () => {
        await reapExpiredCeremonies(deps.database.db, deps.clock.now());
      },
    },
  );
}
