import { and, asc, count, eq, inArray, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { Leadership, type BackgroundTask } from '../../coordination/index.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/schema/notifications.js';
import type { Queryable } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import { fleetCounterOf } from './counters.js';
import { forbiddenNetworks } from './destinations.js';
import { sendOnce, type Attempt } from './send.js';

/** Waits after each failed attempt, in seconds: about 17 hours in all, then the delivery gives up. */
export const RETRY_DELAYS_S = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800];
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;
/** Deliveries sent in one round; endpoints served at once; one endpoint's deliveries in one round at most. */
const ROUND_BATCH = 50;
const PARALLEL = 8;
const PER_ENDPOINT = 10;
/** Failed attempts in a row that open an endpoint's circuit: then it is paused, 1 min doubling up to 1 h. */
export const CIRCUIT_THRESHOLD = 5;
const PAUSE_FIRST_MS = 60_000;
const PAUSE_MAX_MS = 3600_000;
/** Finished deliveries are kept this long for the deliveries list, then deleted (the outbox stays bounded). */
export const KEEP_FINISHED_MS = 14 * 24 * 3600_000;

type OutboxDeps = Pick<Deps, 'database' | 'clock' | 'log' | 'config' | 'metrics'>;

/**
 * Sends what is due, fairly between endpoints (issue 43): each endpoint is a lane, sent in order
 * one at a time, lanes side by side, at most PER_ENDPOINT rows of one endpoint in a round, so an
 * endpoint with a backlog or one that never answers holds no other. A lane stops at its first
 * failure (the rest wait for the next round), and an endpoint that failed CIRCUIT_THRESHOLD times
 * in a row is paused (its circuit open) until `paused_until`; then one round's first success
 * closes it. A 2xx marks a delivery delivered; anything else schedules its next attempt after its
 * back-off, and the last failure gives up (`failed`). A replica that dies mid-round leaves its rows
 * pending: the next leader sends them again, with the same delivery id (at least once). Resolves
 * how many were attempted.
 */
export async function deliverDue(deps: OutboxDeps): Promise<number> {
  const { db } = deps.database;
  const now = deps.clock.now();
  // A disabled endpoint's deliveries wait until it is enabled again, a paused one's until its
  // pause ends; a test is sent regardless (it is how staff check an endpoint).
  const isTest = eq(webhookDeliveries.eventType, 'webhook.test');
  const ranked = db
    .select({
      id: webhookDeliveries.id,
      due: webhookDeliveries.nextAttemptAt,
      rank: sql<number>`row_number() over (partition by ${webhookDeliveries.endpointId} order by ${webhookDeliveries.nextAttemptAt}, ${webhookDeliveries.id})`.as('rank'),
    })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(and(eq(webhookEndpoints.enabled, true), or(isNull(webhookEndpoints.pausedUntil), lte(webhookEndpoints.pausedUntil, now))), isTest),
      ),
    )
    .as('ranked');
  const picked = db.select({ id: ranked.id }).from(ranked).where(lte(ranked.rank, PER_ENDPOINT)).orderBy(asc(ranked.due)).limit(ROUND_BATCH);
  const due = await db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(inArray(webhookDeliveries.id, picked))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id));
  const lanes = new Map<string, typeof due>();
  for (const row of due) lanes.set(row.endpoint.id, [...(lanes.get(row.endpoint.id) ?? []), row]);
  const forbidden = forbiddenNetworks(deps.config.webhookForbiddenNetworks);
  const queue = [...lanes.values()];
  let attempted = 0;
  const worker = async () => {
    for (let lane = queue.shift(); lane; lane = queue.shift()) {
      for (const { delivery, endpoint } of lane) {
        attempted++;
        const attempt = await sendOnce(
          { id: delivery.id, url: endpoint.url, secret: endpoint.secret, format: endpoint.format, eventType: delivery.eventType, payload: delivery.payload },
          now,
          forbidden,
        );
        await record(deps, delivery.id, delivery.attempts + 1, attempt);
        await recordStanding(deps, endpoint.id, attempt.ok);
        if (!attempt.ok) break;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
  return attempted;
}

/** An endpoint's failures in a row, and its pause once they reach CIRCUIT_THRESHOLD. */
async function recordStanding(deps: OutboxDeps, endpointId: string, ok: boolean): Promise<void> {
  const { db } = deps.database;
  if (ok) {
    await db.update(webhookEndpoints).set({ consecutiveFailures: 0, pausedUntil: null }).where(eq(webhookEndpoints.id, endpointId));
    return;
  }
  const [row] = await db
    .update(webhookEndpoints)
    .set({ consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1` })
    .where(eq(webhookEndpoints.id, endpointId))
    .returning({ failures: webhookEndpoints.consecutiveFailures });
  if (!row || row.failures < CIRCUIT_THRESHOLD) return;
  const pause = Math.min(PAUSE_FIRST_MS * 2 ** Math.min(row.failures - CIRCUIT_THRESHOLD, 16), PAUSE_MAX_MS);
  const until = new Date(deps.clock.now().getTime() + pause);
  await db.update(webhookEndpoints).set({ pausedUntil: until }).where(eq(webhookEndpoints.id, endpointId));
  if (row.failures === CIRCUIT_THRESHOLD) deps.log.warn({ endpoint_id: endpointId, failures: row.failures, paused_until: until.toISOString() }, 'webhook endpoint paused after failures in a row');
}

async function record(deps: OutboxDeps, id: string, attempts: number, attempt: Attempt): Promise<void> {
  const now = deps.clock.now();
  const counter = fleetCounterOf(deps.metrics.registry);
  const common = { attempts, lastAttemptAt: now, lastStatus: attempt.status ?? null, lastError: attempt.ok ? null : (attempt.error ?? 'failed') };
  if (attempt.ok) {
    counter?.inc({ outcome: 'delivered' });
    await deps.database.db.update(webhookDeliveries).set({ ...common, status: 'delivered', deliveredAt: now }).where(eq(webhookDeliveries.id, id));
    return;
  }
  const givesUp = attempt.forbidden === true || attempts >= MAX_ATTEMPTS;
  counter?.inc({ outcome: givesUp ? 'gave_up' : 'failed' });
  if (givesUp) deps.log.warn({ delivery_id: id, attempts, error: common.lastError }, 'webhook delivery gave up');
  const delay = RETRY_DELAYS_S[Math.min(attempts - 1, RETRY_DELAYS_S.length - 1)]! * 1000;
  await deps.database.db
    .update(webhookDeliveries)
    .set({ ...common, status: givesUp ? 'failed' : 'pending', nextAttemptAt: new Date(now.getTime() + delay) })
    .where(eq(webhookDeliveries.id, id));
}

/** Deletes finished deliveries older than KEEP_FINISHED_MS. */
export async function pruneDeliveries(deps: Pick<Deps, 'database' | 'clock'>): Promise<void> {
  const before = new Date(deps.clock.now().getTime() - KEEP_FINISHED_MS);
  await deps.database.db
    .delete(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.status, ['delivered', 'failed']), lt(webhookDeliveries.createdAt, before)));
}

/** How often the leader looks for due deliveries. */
export const DELIVERY_INTERVAL_MS = 2_000;
const PRUNE_EVERY_MS = 3600_000;

/**
 * The delivery loop: one replica at a time (a Leadership on `leader:webhooks`) sends what is due,
 * every DELIVERY_INTERVAL_MS, and prunes the finished rows each hour. A round never overlaps the
 * previous one; a round's failure (the database away) is logged and the loop goes on.
 */
export function webhookDeliveryTask(deps: OutboxDeps, replica: string): BackgroundTask {
  const leadership = new Leadership({ db: deps.database.db, clock: deps.clock, replica }, { name: 'webhooks' });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let prunedAt = 0;
  const round = async () => {
    try {
      if (!(await leadership.acquire())) return;
      while (!stopped && (await deliverDue(deps)) >= ROUND_BATCH && leadership.holds()) {
        // A full batch: more may be due.
      }
      const now = deps.clock.now().getTime();
      if (now - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = now;
        await pruneDeliveries(deps);
      }
    } catch (err) {
      deps.log.warn({ err, task: 'webhook_delivery' }, 'background round failed; tried again next round');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = round().finally(schedule);
    }, DELIVERY_INTERVAL_MS);
    timer.unref();
  };
  return {
    name: 'webhook_delivery',
    start() {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await leadership.release();
    },
  };
}

/** Deliveries waiting in the outbox (not yet delivered, not given up), for the fleet's figures. */
export async function pendingDeliveries(db: Queryable): Promise<number> {
  const [row] = await db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.status, 'pending'));
  return Number(row?.n ?? 0);
}
