import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import type { PodUsage } from '../../adapters/cluster/types.js';
import { backgroundLoop, type BackgroundTask } from '../../coordination/index.js';
import { serverUsage } from '../../db/schema/usage.js';
import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { requireAccess, requireServer } from '../servers/index.js';
import type { ServersParts } from '../servers/index.js';

const MINUTE = 60_000;
const HOUR = 3600_000;
/** Minute rows are kept a day, hour rows 30 days: at most 1440 + 720 rows a server. */
export const KEEP_MINUTES_MS = 24 * HOUR;
export const KEEP_HOURS_MS = 30 * 24 * HOUR;

type UsageDeps = Pick<Deps, 'database' | 'clock' | 'cluster' | 'config' | 'log'> & ServersParts;

const floorTo = (ms: number, step: number) => Math.floor(ms / step) * step;

/**
 * One sample of every server the cache knows: players online (from the cache) and, where the
 * cluster reports them, its pod's CPU and memory. Then complete hours are folded into hour rows
 * (average players and resources, the most players), and rows past their keep are deleted.
 * Runs on one replica each minute; a minute sampled twice keeps its first row.
 */
export async function sampleUsage(deps: UsageDeps): Promise<void> {
  const { db } = deps.database;
  const now = deps.clock.now().getTime();
  const minute = new Date(floorTo(now, MINUTE));
  let usage: Map<string, PodUsage> | undefined;
  try {
    usage = await deps.cluster.podUsage?.();
  } catch (err) {
    // Players are still worth keeping when the metrics API does not answer.
    deps.log.warn({ err }, 'pod usage not read; sampling players only');
  }
  const rows = [...deps.serverCache.all()].map(({ resource }) => {
    const pod = usage?.get(resource.spec.name);
    return {
      serverName: resource.spec.name,
      resolution: 'minute' as const,
      at: minute,
      playersAvg: resource.status.playersOnline,
      playersMax: resource.status.playersOnline,
      cpuMilli: pod?.cpuMilli ?? null,
      memoryMib: pod?.memoryMib ?? null,
      samples: 1,
    };
  });
  for (let i = 0; i < rows.length; i += 500) await db.insert(serverUsage).values(rows.slice(i, i + 500)).onConflictDoNothing();
  await foldHours(deps, new Date(floorTo(now, HOUR)));
  await db.delete(serverUsage).where(and(eq(serverUsage.resolution, 'minute'), lt(serverUsage.at, new Date(now - KEEP_MINUTES_MS))));
  await db.delete(serverUsage).where(and(eq(serverUsage.resolution, 'hour'), lt(serverUsage.at, new Date(now - KEEP_HOURS_MS))));
}

/** Folds the minute rows of every complete hour of the last day that has no hour row yet. */
async function foldHours(deps: Pick<Deps, 'database'>, currentHour: Date): Promise<void> {
  const from = new Date(currentHour.getTime() - KEEP_MINUTES_MS);
  const hourOf = sql`to_timestamp(floor(extract(epoch from ${serverUsage.at}) / 3600) * 3600)`;
  await deps.database.db.execute(sql`
    insert into ${serverUsage} (server_name, resolution, at, players_avg, players_max, cpu_milli, memory_mib, samples)
    select server_name, 'hour', ${hourOf}, avg(players_avg), max(players_max), round(avg(cpu_milli)), round(avg(memory_mib)), sum(samples)
    from ${serverUsage}
    where resolution = 'minute' and at >= ${from.toISOString()} and at < ${currentHour.toISOString()}
    group by server_name, ${hourOf}
    on conflict do nothing`);
}

/** The sampler: one replica each minute. */
export function usageSamplingTask(deps: UsageDeps, replica: string): BackgroundTask {
  return backgroundLoop(
    { db: deps.database.db, clock: deps.clock, log: deps.log, replica },
    { name: 'usage_sampling', replicas: 'one', intervalMs: MINUTE, round: () => sampleUsage(deps) },
  );
}

export const USAGE_RANGES = { '24h': { resolution: 'minute', spanMs: KEEP_MINUTES_MS }, '30d': { resolution: 'hour', spanMs: KEEP_HOURS_MS } } as const;
export type UsageRange = keyof typeof USAGE_RANGES;

/** A server's usage as a time series, oldest first: minutes over the last day, or hours over 30 days. */
export async function usageHistory(deps: Pick<Deps, 'database' | 'clock' | 'cluster' | 'config'> & ServersParts, name: string, session: SessionContext, range: UsageRange) {
  await requireServer(deps, name);
  await requireAccess(deps, name, session, 'console.read', `Only ${name}'s owner may read its usage.`);
  const { resolution, spanMs } = USAGE_RANGES[range];
  const since = new Date(deps.clock.now().getTime() - spanMs);
  const rows = await deps.database.db
    .select()
    .from(serverUsage)
    .where(and(eq(serverUsage.serverName, name), eq(serverUsage.resolution, resolution), gte(serverUsage.at, since)))
    .orderBy(asc(serverUsage.at));
  return {
    server: name,
    range,
    resolution,
    points: rows.map((r) => ({
      at: r.at.toISOString(),
      players_avg: Math.round(r.playersAvg * 100) / 100,
      players_max: r.playersMax,
      cpu_milli: r.cpuMilli,
      memory_mib: r.memoryMib,
    })),
  };
}
