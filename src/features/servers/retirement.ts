import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { serverRetirements } from '../../db/schema/servers.js';
import { DomainError } from '../../lib/errors.js';

export type Retirement = typeof serverRetirements.$inferSelect;

export async function retirementOf(db: Queryable, serverName: string): Promise<Retirement | undefined> {
  const [row] = await db.select().from(serverRetirements).where(eq(serverRetirements.serverName, serverName));
  return row;
}

/** A retiring server is never started again (409 retiring). */
export async function refuseRetiring(db: Queryable, serverName: string): Promise<void> {
  if (await retirementOf(db, serverName)) throw new DomainError('retiring', `${serverName} is being retired.`);
}
