import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addWebhookEndpoint } from '../../../test/helpers/webhooks.js';
import { builds } from '../../db/schema/builds.js';
import { webhookDeliveries } from '../../db/schema/notifications.js';
import { recordScan } from './service.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));

describe('the scan gate raises build.blocked', () => {
  const database = useTestDatabase();

  it('queues one event when the gate blocks a build, none when it passes', async () => {
    const deps = createTestDeps(database());
    const { db } = deps.database;
    const now = deps.clock.now();
    await addWebhookEndpoint(db, now, { events: ['build.blocked'], name: 'builds', url: 'https://hooks.example.com/b', format: 'discord' });
    const building = () => ({ imageRef: 'registry.test/modpack:1', status: 'building' as const, requestedBy: 'test', createdAt: now, updatedAt: now });
    const [blocked, clean] = await db.insert(builds).values([building(), building()]).returning();
    expect((await recordScan(deps, blocked!.id, { report: fixture('trivy-modpack.json') })).blocked).toBe(true);
    expect((await recordScan(deps, clean!.id, { report: fixture('trivy-clean.json') })).blocked).toBe(false);
    const queued = await db.select().from(webhookDeliveries);
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ eventType: 'build.blocked', eventKey: `build.blocked:${blocked!.id}` });
    expect(queued[0]!.payload).toMatchObject({ subject: { kind: 'build', id: blocked!.id }, data: { image_ref: 'registry.test/modpack:1' } });
  });
});
