import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { rateLimitBuckets, sessions } from '../../db/schema/accounts.js';
import { takeToken } from '../doors/index.js';
import { purgeAccountState } from './housekeeping.js';

describe('accounts housekeeping', () => {
  const database = useTestDatabase();

  it('deletes sessions a day past expiry and refilled buckets, and keeps live ones', async () => {
    const deps = createTestDeps(database());
    const db = deps.database.db;
    const user = await createUser(deps);
    const old = await signIn(deps, { userId: user.id });
    await takeToken(db, 'purge-me', deps.clock.now());
    deps.clock.advance(32 * 24 * 3600_000);
    const live = await signIn(deps, { userId: user.id });
    await takeToken(db, 'keep-me', deps.clock.now());
    await purgeAccountState(db, deps.clock.now());
    expect(await db.select().from(sessions).where(eq(sessions.tokenHash, old.tokenHash))).toHaveLength(0);
    expect(await db.select().from(sessions).where(eq(sessions.tokenHash, live.tokenHash))).toHaveLength(1);
    expect((await db.select().from(rateLimitBuckets)).map((b) => b.key)).toEqual(['keep-me']);
  });
});
