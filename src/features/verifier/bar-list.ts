import { eq } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { barredPlayers } from '../../db/schema/index.js';

/** Whether a canonical UUID (lowercase dashed) is on the bar list. Rejects when the database does. */
export async function isBarred(db: Queryable, mcUuid: string): Promise<boolean> {
  const rows = await db
    .select({ mcUuid: barredPlayers.mcUuid })
    .from(barredPlayers)
    .where(eq(barredPlayers.mcUuid, mcUuid))
    .limit(1);
  return rows.length > 0;
}
