import { SYSTEM_LABEL, type ServerSpec } from '../../adapters/cluster/types.js';
import type { Deps } from '../../deps.js';
import { platformDefaultImage } from './create.js';
import type { ServersParts } from './core/index.js';

/** The system services a simulated cluster provisions, as a platform install would. */
export const SIMULATED_SYSTEM_SERVERS: ServerSpec[] = [
  { name: 'login', subdomain: 'login', displayName: 'Login gate', desiredState: 'Running', labels: { [SYSTEM_LABEL]: 'true' } },
  { name: 'lobby', subdomain: 'lobby', displayName: 'Lobby', desiredState: 'Running', labels: { [SYSTEM_LABEL]: 'true' } },
];

/**
 * Start-up of the servers feature: the platform default image is set and whitelisted on first
 * start, and the server cache is filled before the first proxy call (a failure is logged; the
 * cache retries on the first request). The servers module's closing task closes the cache.
 */
export async function startServersFeature(deps: Deps & ServersParts): Promise<void> {
  const image = await platformDefaultImage(deps);
  deps.log.info({ image }, 'platform default image');
  try {
    await deps.serverCache.ready();
  } catch (err) {
    deps.log.warn({ err }, 'server cache: first list failed; retried on demand');
  }
}
