import { backgroundLoop, runOnOneReplica, type BackgroundTask } from '../../coordination/index.js';
import { ClusterNotFoundError } from '../../adapters/cluster/types.js';
import { writeAudit } from '../audit/index.js';
import { serverRetirements } from '../../db/schema/servers.js';
import type { Deps } from '../../deps.js';
import { forgetServerRows, type ServerRowsElsewhere } from './forget.js';
import { integerSetting, SERVER_SETTINGS } from './wakes/index.js';
import type { ServersParts } from './core/index.js';

/** The loop's name: one replica at a time runs a round (src/coordination). */
export const RETIREMENT_SWEEP = 'retirement_sweep';

type SweepDeps = Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log'> & ServersParts;

/**
 * One round of the retirement sweep: every retiring server is asked to stop; one that has stopped
 * is released (its claim, allowlist and wake records go, so it is claimable again) or, with
 * `delete`, removed from the cluster. Returns the servers carried out.
 */
export async function sweepRetirements(deps: SweepDeps, elsewhere: readonly ServerRowsElsewhere[] = []): Promise<string[]> {
  return deps.database.db.transaction(async (tx) => {
    const done: string[] = [];
    const cache = deps.serverCache;
    for (const retiring of await tx.select().from(serverRetirements)) {
      const name = retiring.serverName;
      const server = cache.get(name);
      try {
        if (server && server.resource.status.phase !== 'Stopped') {
          if (server.resource.spec.desiredState !== 'Stopped') await deps.cluster.setDesiredState(name, 'Stopped');
          continue;
        }
        if (server && retiring.delete) await deps.cluster.removeServer(name);
      } catch (err) {
        if (!(err instanceof ClusterNotFoundError)) {
          deps.log.warn({ err, server: name }, 'retirement sweep: the cluster refused; retried next round');
          continue;
        }
      }
      await forgetServerRows(tx, name);
      // A released server's next claimant sees nothing of its previous owner's (its schedules).
      for (const forget of elsewhere) await forget(tx, name);
      await writeAudit(tx, {
        at: deps.clock.now(),
        actor: 'system',
        action: retiring.delete ? 'server.retired_deleted' : 'server.retired_released',
        target: name,
        detail: { requested_by: retiring.requestedBy },
        requestId: null,
      });
      done.push(name);
    }
    return done;
  });
}

async function retirementRound(deps: SweepDeps, elsewhere: readonly ServerRowsElsewhere[]): Promise<void> {
  const done = await sweepRetirements(deps, elsewhere);
  if (done.length) deps.log.info({ servers: done }, 'retirement sweep: servers retired');
}

const sweepSeconds = (deps: SweepDeps) =>
  integerSetting(deps.database.db, SERVER_SETTINGS.retirementSweepSeconds).catch(() => SERVER_SETTINGS.retirementSweepSeconds.fallback);

/**
 * One round on one replica (the one that takes the round's lease); resolves the servers retired,
 * or undefined when another replica holds the round.
 */
export async function retirementRoundOn(deps: SweepDeps, replica: string, elsewhere: readonly ServerRowsElsewhere[] = []): Promise<string[] | undefined> {
  let done: string[] | undefined;
  const intervalMs = Math.max(1, await sweepSeconds(deps)) * 1000;
  await runOnOneReplica({ db: deps.database.db, clock: deps.clock, log: deps.log, replica }, RETIREMENT_SWEEP, intervalMs, async () => {
    done = await sweepRetirements(deps, elsewhere);
  });
  return done;
}

/**
 * The sweep as a background task: a round every `retirement_sweep_seconds`, on one replica;
 * `elsewhere` removes what the features above servers hold of a server carried out.
 */
export function retirementSweepTask(deps: SweepDeps, replica: string, elsewhere: readonly ServerRowsElsewhere[] = []): BackgroundTask {
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    {
      name: RETIREMENT_SWEEP,
      replicas: 'one',
      intervalMs: async () => Math.max(1, await sweepSeconds(deps)) * 1000,
      firstAfterMs: 1000,
      round: () => retirementRound(deps, elsewhere),
    },
  );
}
