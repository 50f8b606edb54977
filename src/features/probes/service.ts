import { withTimeout } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';

const CHECK_TIMEOUT_MS = 2000;

/** Resolves when the database and the cluster answer; otherwise 503 naming those that do not. Never hangs past the timeout. */
export async function requireReady(deps: Pick<Deps, 'database' | 'cluster' | 'log'>): Promise<void> {
  const failed = await unreadyDependencies(deps);
  if (failed.length > 0) throw new DomainError('unavailable', `Not ready: ${failed.join(', ')} not reachable.`);
}

/** Names of the dependencies that do not answer (empty when ready). */
async function unreadyDependencies(deps: Pick<Deps, 'database' | 'cluster' | 'log'>): Promise<string[]> {
  const checks: Array<[string, () => Promise<void>]> = [
    ['database', () => withTimeout(deps.database.ping(CHECK_TIMEOUT_MS), CHECK_TIMEOUT_MS, 'database')],
    // Once the cluster's reads come from synced watch caches, an API-server blip does not take
    // every replica out of its Services together (the proxy's by-host path reads only the caches).
    ['cluster', () => (deps.cluster.cachesSynced?.() ? Promise.resolve() : withTimeout(deps.cluster.ping(), CHECK_TIMEOUT_MS, 'cluster'))],
  ];
  const results = await Promise.allSettled(checks.map(([, check]) => check()));
  const failed: string[] = [];
  results.forEach((result, i) => {
    if (result.status === 'rejected') {
      const name = checks[i]![0];
      failed.push(name);
      deps.log.warn({ dependency: name, err: result.reason }, 'readiness check failed');
    }
  });
  return failed;
}
