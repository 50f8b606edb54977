import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../test/helpers/app.js';
import { useTestDatabase } from '../../test/helpers/database.js';
import { createUser, signIn } from '../../test/helpers/sessions.js';
import { sessions, users } from './schema/accounts.js';

/**
 * The session change feed on PostgreSQL (src/db/change-feed.ts with the `session_changes`
 * trigger). PostgreSQL delivers notifications in commit order, so once the feed has heard back a
 * ping sent after a write, whatever that write notified has arrived: "nothing arrived" is decided
 * without waiting on a timer.
 */
describe.runIf(process.env.TEST_DATABASE_URL)('the session change feed', () => {
  const database = useTestDatabase();

  /** Waits until every change committed before now has been delivered. */
  async function delivered(): Promise<void> {
    const feed = database().changeFeed!();
    const now = performance.now();
    while (feed.seenThrough() <= now) {
      if (performance.now() - now > 10_000) throw new Error('the feed heard no ping back');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** How many changes the feed tells of for `write` (after what came before has been delivered). */
  async function changesOf(write: () => Promise<unknown>): Promise<number> {
    await delivered();
    let changes = 0;
    const stop = database().changeFeed!().subscribe(() => changes++);
    try {
      await write();
      await delivered();
      return changes;
    } finally {
      stop();
    }
  }

  it('tells of a revoke, a disable and a deletion, and not of a session sliding', async () => {
    const deps = createTestDeps(database());
    const user = await createUser(deps);
    const session = await signIn(deps, { userId: user.id });
    const { db } = database();
    const bySession = eq(sessions.tokenHash, session.tokenHash);

    expect(await changesOf(() => db.update(sessions).set({ lastSeenAt: new Date(), expiresAt: new Date(Date.now() + 3_600_000) }).where(bySession))).toBe(0);
    expect(await changesOf(() => db.update(sessions).set({ revokedAt: new Date() }).where(bySession))).toBe(1);
    expect(await changesOf(() => db.update(users).set({ disabled: true }).where(eq(users.id, user.id)))).toBe(1);
    expect(await changesOf(() => db.delete(sessions).where(bySession))).toBe(1);
  });
});
