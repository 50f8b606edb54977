import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { userQuotas, users } from '../../db/schema/accounts.js';
import { writeSetting } from '../servers/wakes/settings.js';
import { displayIdentities, findUserByMcUuid, getQuota } from './directory.js';

describe('accounts directory', () => {
  const database = useTestDatabase();

  it('finds the live account linked to a UUID, and nothing for a deleted or unknown one', async () => {
    const deps = createTestDeps(database());
    const db = deps.database.db;
    const user = await createUser(deps, { role: 'admin', email: `a-${randomUUID()}@example.com` });
    const mcUuid = randomUUID();
    await linkAccount(deps, { userId: user.id, mcUuid: mcUuid.toUpperCase() });
    const found = await findUserByMcUuid(db, mcUuid);
    expect(found).toMatchObject({ id: user.id, role: 'admin', disabled: false, username: user.username });
    expect(await findUserByMcUuid(db, randomUUID())).toBeUndefined();
    await db.update(users).set({ deletedAt: deps.clock.now() }).where(eq(users.id, user.id));
    expect(await findUserByMcUuid(db, mcUuid)).toBeUndefined();
  });

  it('reports the platform defaults when staff set no quota (three servers), and the stored limits otherwise', async () => {
    const deps = createTestDeps(database());
    const user = await createUser(deps);
    expect(await getQuota(deps.database.db, user.id)).toEqual({
      user_id: user.id,
      max_servers: 3,
      max_cpu_milli: null,
      max_memory_mb: null,
      max_storage_gb: null,
    });
    // The defaults are settings: a whole number, or null for unlimited; anything else is not taken.
    await writeSetting(deps.database.db, 'default_max_servers', null, deps.clock.now());
    await writeSetting(deps.database.db, 'default_max_memory_mb', 8192, deps.clock.now());
    await writeSetting(deps.database.db, 'default_max_cpu_milli', 'lots', deps.clock.now());
    expect(await getQuota(deps.database.db, user.id)).toMatchObject({ max_servers: null, max_cpu_milli: null, max_memory_mb: 8192 });
    await writeSetting(deps.database.db, 'default_max_servers', 3, deps.clock.now());
    await writeSetting(deps.database.db, 'default_max_memory_mb', null, deps.clock.now());
    await writeSetting(deps.database.db, 'default_max_cpu_milli', null, deps.clock.now());
    await deps.database.db.insert(userQuotas).values({ userId: user.id, maxServers: 2, maxMemoryMb: 4096 });
    expect(await getQuota(deps.database.db, user.id)).toEqual({
      user_id: user.id,
      max_servers: 2,
      max_cpu_milli: null,
      max_memory_mb: 4096,
      max_storage_gb: null,
    });
  });

  it('shows users by e-mail, else by username', async () => {
    const deps = createTestDeps(database());
    const email = `b-${randomUUID()}@example.com`;
    const a = await createUser(deps, { email });
    const b = await createUser(deps);
    const map = await displayIdentities(deps.database.db, [a.id, b.id, a.id, randomUUID()]);
    expect(map.size).toBe(2);
    expect(map.get(a.id)).toBe(email);
    expect(map.get(b.id)).toBe(b.username);
    expect((await displayIdentities(deps.database.db, [])).size).toBe(0);
  });
});
