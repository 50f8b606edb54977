import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { addWebhookEndpoint } from '../../../../test/helpers/webhooks.js';
import { testWorlds, useTempDir } from '../../../../test/helpers/worlds.js';
import { webhookDeliveries } from '../../../db/schema/notifications.js';
import { worldBackups } from '../../../db/schema/worlds.js';
import { failBackup, reverifyBackups } from './records.js';

describe('backups raise webhook events', () => {
  const database = useTestDatabase();
  const temp = useTempDir();

  it('a backup that fails and one found corrupt each queue one event for a subscribed endpoint', async () => {
    const deps = createTestDeps(database(), { overrides: { worlds: testWorlds(temp()) } });
    const { db } = deps.database;
    const now = deps.clock.now();
    await addWebhookEndpoint(db, now, { events: ['backup.failed', 'backup.corrupt'] });
    const row = (status: 'backing_up' | 'present') => ({
      serverName: 'survival',
      reason: 'manual' as const,
      status,
      storageKey: `missing/${status}.tar.gz`,
      sha256: 'a'.repeat(64),
      verifiedAt: new Date(now.getTime() - 3 * 86_400_000),
      createdAt: new Date(now.getTime() - 3 * 86_400_000),
      expiresAt: new Date(now.getTime() + 86_400_000),
    });
    const [taking, kept] = await db.insert(worldBackups).values([row('backing_up'), row('present')]).returning();

    await failBackup(deps, taking!.id);
    // The kept backup's object is gone from the store: its re-verification marks it corrupt.
    expect(await reverifyBackups(deps, 86_400_000, 10)).toBe(1);
    await reverifyBackups(deps, 0, 10);

    const queued = await db.select().from(webhookDeliveries);
    expect(queued.map((d) => [d.eventType, (d.payload as { subject: { id: string } }).subject.id]).sort()).toEqual([
      ['backup.corrupt', kept!.id],
      ['backup.failed', taking!.id],
    ]);
    expect(queued.find((d) => d.eventType === 'backup.failed')!.payload).toMatchObject({ data: { server: 'survival', reason: 'manual' } });
  });
});
