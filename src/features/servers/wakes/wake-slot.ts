import { eq, lte } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { serverWakes } from '../../../db/schema/servers.js';
import { DomainError } from '../../../lib/errors.js';
import { wakePolicyInForce } from './settings.js';

/** Counts a wake in the database: at most one per server per cooldown, whichever replica is asked. */
export async function takeWakeSlot(db: Queryable, now: Date, serverName: string): Promise<void> {
  const cooldownMs = (await wakePolicyInForce(db)).wakeCooldownSeconds * 1000;
  const taken = await db
    .insert(serverWakes)
    .values({ serverName, lastWakeAt: now })
    .onConflictDoUpdate({
      target: serverWakes.serverName,
      set: { lastWakeAt: now },
      setWhere: lte(serverWakes.lastWakeAt, new Date(now.getTime() - cooldownMs)),
    })
    .returning({ serverName: serverWakes.serverName });
  if (taken.length > 0) return;
  const [row] = await db.select({ at: serverWakes.lastWakeAt }).from(serverWakes).where(eq(serverWakes.serverName, serverName));
  const waitMs = row ? row.at.getTime() + cooldownMs - now.getTime() : cooldownMs;
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  throw new DomainError('cooldown', `${serverName} was woken moments ago; try again in ${retryAfter} s.`, { retryAfterSeconds: retryAfter });
}
