import { and, asc, eq, inArray, lt, lte, or } from 'drizzle-orm';
import { Leadership, type BackgroundTask } from '../../coordination/index.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/schema/notifications.js';
import type { Deps } from '../../deps.js';
import { fleetCounterOf } from './counters.js';
import { forbiddenNetworks } from './destinations.js';
import { sendOnce, type Attempt } from './send.js';

/** Waits after each failed attempt, in seconds: about 17 hours in all, then the delivery gives up. */
export const RETRY_DELAYS_S = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800];
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;
/** Deliveries sent in one round, and at once. */
const ROUND_BATCH = 50;
const PARALLEL = 8;
/** Finished deliveries are kept this long for the deliveries list, then deleted (the outbox stays bounded). */
export const KEEP_FINISHED_MS = 14 * 24 * 3600_000;

type OutboxDeps = Pick<Deps, 'database' | 'clock' | 'log' | 'config' | 'metrics'>;

/**
 * Sends every delivery that is due, at most ROUND_BATCH: a 2xx marks it delivered; anything else
 * schedules the next attempt after its back-off, and the last failure gives up (`failed`). A
 * replica that dies mid-round leaves its rows pending: the next leader sends them again, with the
 * same delivery id (at least once). Resolves how many were attempted.
 */
export async function deliverDue(deps: OutboxDeps): Promise<number> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const due = await db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    // A disabled endpoint's deliveries wait until it is enabled again; a test is sent regardless.
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(eq(webhookEndpoints.enabled, true), eq(webhookDeliveries.eventType, 'webhook.test')),
      ),
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(ROUND_BATCH);
  const forbidden = forbiddenNetworks(deps.config.webhookForbiddenNetworks);
  const queue = [...due];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { delivery, endpoint } = next;
      const attempt = await sendOnce(
        { id: delivery.id, url: endpoint.url, secret: endpoint.secret, format: endpoint.format, eventType: delivery.eventType, payload: delivery.payload },
        now,
        forbidden,
      );
      await record(deps, delivery.id, delivery.attempts + 1, attempt);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, due.length) }, worker));
  return due.length;
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
