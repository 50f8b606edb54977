import { sql } from 'drizzle-orm';
import { ADVISORY_LOCKS } from '../db/advisory-locks.js';
import type { Transaction } from '../db/client.js';

export { ADVISORY_LOCKS };

/**
 * PostgreSQL advisory locks: short critical sections that must run one at a time across every
 * replica, held until the transaction ends (`pg_advisory_xact_lock`, so a crash can never leave one
 * behind). Their keys are in one list, src/db/advisory-locks.ts (the migrator below this module
 * takes one too).
 */
export type AdvisoryLockName = keyof typeof ADVISORY_LOCKS;

/** Keyed locks: one per subject (a Minecraft UUID's link, a user's migration), hashed from a text key. */
export type KeyedAdvisoryLock = { scope: 'link'; mcUuid: string } | { scope: 'migrate'; userId: string } | { scope: 'schedules'; serverName: string };

function keyText(lock: KeyedAdvisoryLock): string {
  if (lock.scope === 'link') return `felis:link:${lock.mcUuid}`;
  if (lock.scope === 'migrate') return `felis:migrate:${lock.userId}`;
  // A server's schedules are counted against their limit one save at a time.
  return `felis:schedules:${lock.serverName}`;
}

/** Waits for the lock and holds it until `tx` ends. */
export async function lockForTransaction(tx: Transaction, lock: AdvisoryLockName | KeyedAdvisoryLock): Promise<void> {
  if (typeof lock === 'string') {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS[lock].toString()}::bigint)`);
  } else {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${keyText(lock)}, 0))`);
  }
}
