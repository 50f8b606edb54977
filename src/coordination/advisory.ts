import { sql } from 'drizzle-orm';
import type { Transaction } from '../db/client.js';

/**
 * PostgreSQL advisory locks: short critical sections that must run one at a time across every
 * replica, held until the transaction ends (`pg_advisory_xact_lock`, so a crash can never leave one
 * behind). Every key lives in this one list, so no two parts of the service pick the same number.
 * Each is `FEL` and two letters in ASCII.
 */
export const ADVISORY_LOCKS = {
  /** Migrations at start-up (a session lock on the migrator's own connection: src/db/migrate.ts). */
  migrations: 0x46454c4953n, // "FELIS"
  /** Replicas starting together on an empty database mint one setup token between them. */
  setupToken: 0x46454c5354n, // "FELST"
  /** The live discoverable passkey sign-ins are counted against their caps one at a time. */
  discoverablePasskeys: 0x46454c504bn, // "FELPK"
  /** Wakes are counted one after another against the node's running-server cap. */
  capacity: 0x46454c4341n, // "FELCA"
} as const;

export type AdvisoryLockName = keyof typeof ADVISORY_LOCKS;

/** Keyed locks: one per subject (a Minecraft UUID's link, a user's migration), hashed from a text key. */
export type KeyedAdvisoryLock = { scope: 'link'; mcUuid: string } | { scope: 'migrate'; userId: string };

const keyText = (lock: KeyedAdvisoryLock) => (lock.scope === 'link' ? `felis:link:${lock.mcUuid}` : `felis:migrate:${lock.userId}`);

/** Waits for the lock and holds it until `tx` ends. */
export async function lockForTransaction(tx: Transaction, lock: AdvisoryLockName | KeyedAdvisoryLock): Promise<void> {
  if (typeof lock === 'string') {
    await tx.execute(sql`select pg_advisory_xact_lock(${ADVISORY_LOCKS[lock].toString()}::bigint)`);
  } else {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${keyText(lock)}, 0))`);
  }
}
