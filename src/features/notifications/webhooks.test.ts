import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import { auditLog } from '../../db/schema/audit.js';
import { webhookDeliveries } from '../../db/schema/notifications.js';
import { serverEventsTask } from '../fleet/index.js';
import { raiseEvent } from './index.js';
import { CIRCUIT_THRESHOLD, deliverDue, MAX_ATTEMPTS, RETRY_DELAYS_S } from './outbox.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP receiver on 127.0.0.1: records each request and answers what `answer` says. */
class Receiver {
  received: Received[] = [];
  answer: (req: Received) => number | 'hang' = () => 204;
  #server: Server | undefined;
  port = 0;

  async start(port = 0, host = '127.0.0.1'): Promise<void> {
    this.#server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const got = { headers: req.headers, body };
        this.received.push(got);
        const status = this.answer(got);
        if (status === 'hang') return;
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(port, host, resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }
}

const verify = (secret: string, got: Received) => {
  const expected = `sha256=${createHmac('sha256', secret).update(`${got.headers['x-felis-timestamp']}.${got.body}`).digest('hex')}`;
  return got.headers['x-felis-signature'] === expected;
};

const BASE = '/api/v1/settings/webhooks';
const LOCAL = { WEBHOOK_FORBIDDEN_NETWORKS: 'none' };

describe('webhooks: endpoints staff configure', () => {
  const database = useTestDatabase();
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let staffId: string;

  beforeAll(async () => {
    deps = createTestDeps(database());
    apps = createTestApps(deps);
    staffId = (await createUser(deps, { role: 'owner' })).id;
  });

  const asStaff = async (path: string, init: RequestInit = {}) => {
    const { headers } = await signIn(deps, { userId: staffId });
    return apps.external.request(path, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
  };

  it('creates an endpoint and shows its secret once; lists it without the secret; changes, rotates and deletes it, each audited', async () => {
    const created = await asStaff(BASE, jsonRequest('POST', { name: 'ops', url: 'https://hooks.example.com/felis', events: ['backup.failed', 'backup.corrupt'] }));
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: string; secret: string; format: string; enabled: boolean; events: string[] };
    expect(hook).toMatchObject({ format: 'json', enabled: true, events: ['backup.failed', 'backup.corrupt'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const listed = (await (await asStaff(BASE)).json()) as { webhooks: Array<Record<string, unknown>> };
    const mine = listed.webhooks.find((w) => w.id === hook.id)!;
    expect(mine.url).toBe('https://hooks.example.com/felis');
    expect(mine).not.toHaveProperty('secret');

    const changed = await asStaff(`${BASE}/${hook.id}`, jsonRequest('PATCH', { format: 'discord', enabled: false }));
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ format: 'discord', enabled: false });
    const rotated = (await (await asStaff(`${BASE}/${hook.id}`, jsonRequest('PATCH', { rotate_secret: true }))).json()) as { secret: string };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);

    const removed = await asStaff(`${BASE}/${hook.id}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect((await asStaff(`${BASE}/${hook.id}`, { method: 'DELETE' })).status).toBe(404);
    const audited = (await deps.database.db.select().from(auditLog).where(eq(auditLog.target, hook.id))).filter((a) => a.action.startsWith('webhook.'));
    expect(audited.map((a) => a.action).sort()).toEqual(['webhook.create', 'webhook.delete', 'webhook.update', 'webhook.update']);
    expect(audited.every((a) => a.actor === staffId && typeof a.requestId === 'string')).toBe(true);
    expect(JSON.stringify(audited)).not.toContain(hook.secret);
  });

  it('refuses a url with credentials, of another scheme, with a fragment, or into a forbidden network (400 bad_request)', async () => {
    for (const url of [
      'https://user:pass@hooks.example.com/x',
      'https://token@hooks.example.com/x',
      'ftp://hooks.example.com/x',
      'javascript:alert(1)',
      'not a url',
      'https://hooks.example.com/x#frag',
      'http://127.0.0.1:8081/metrics',
      'http://10.1.2.3/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://[::ffff:192.168.1.1]/x',
      // The unspecified address reaches this host's loopback, in each spelling of it.
      'http://[::]:8081/x',
      'http://[0::]/x',
      'http://[::0.0.0.0]/x',
      'http://[::ffff:7f00:1]/x',
      // Forbidden IPv4 addresses inside IPv6 ones: NAT64 (well-known and local-use), 6to4, Teredo's client, IPv4-compatible.
      'http://[64:ff9b::127.0.0.1]/x',
      'http://[64:ff9b::a00:1]/x',
      'http://[64:ff9b:1::a00:1]/x',
      'http://[2002:7f00:1::]/x',
      'http://[2002:c0a8:101::1]/x',
      'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x',
      'http://[::10.0.0.1]/x',
    ]) {
      const res = await asStaff(BASE, jsonRequest('POST', { name: 'x', url }));
      expect(res.status, url).toBe(400);
      expect((await errorOf(res)).code, url).toBe('bad_request');
    }
    expect((await asStaff(BASE, jsonRequest('POST', { name: 'ok', url: 'https://hooks.example.com/y' }))).status).toBe(201);
  });

  it('answers 404 for an unknown endpoint and 400 for a malformed id or query', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [path, init] of [
      [`${BASE}/${unknown}`, jsonRequest('PATCH', { enabled: true })],
      [`${BASE}/${unknown}/test`, { method: 'POST' }],
      [`${BASE}/${unknown}/deliveries`, {}],
    ] as Array<[string, RequestInit]>) {
      const res = await asStaff(path, init);
      expect(res.status, path).toBe(404);
      expect((await errorOf(res)).code).toBe('not_found');
    }
    for (const path of [`${BASE}/not-a-uuid/deliveries`, `${BASE}/${unknown}/deliveries?limit=0`, `${BASE}/${unknown}/deliveries?x=1`]) {
      const res = await asStaff(path);
      expect(res.status, path).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    const badEvents = await asStaff(BASE, jsonRequest('POST', { name: 'x', url: 'https://hooks.example.com/z', events: ['no.such.event'] }));
    expect(badEvents.status).toBe(400);
  });
});

describe('webhooks: delivery through the outbox to a real receiver', () => {
  const database = useTestDatabase();
  const receiver = new Receiver();
  let deps: TestDeps;
  let apps: ReturnType<typeof createTestApps>;
  let staffId: string;

  beforeAll(async () => {
    await receiver.start();
    deps = createTestDeps(database(), { env: LOCAL });
    apps = createTestApps(deps);
    staffId = (await createUser(deps, { role: 'owner' })).id;
  });
  afterAll(() => receiver.stop());

  const asStaff = async (path: string, init: RequestInit = {}) => {
    const { headers } = await signIn(deps, { userId: staffId });
    return apps.external.request(path, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
  };
  const endpoint = async (body: Record<string, unknown>) => {
    const res = await asStaff(BASE, jsonRequest('POST', { name: 'receiver', url: receiver.url, ...body }));
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; secret: string };
  };
  const clear = async () => {
    await deps.database.db.delete(webhookDeliveries);
    receiver.received = [];
    receiver.answer = () => 204;
  };
  const event = (n: number) => ({
    type: 'backup.failed' as const,
    at: deps.clock.now(),
    summary: `backup ${n} failed`,
    subject: { kind: 'backup' as const, id: `b${n}` },
    data: { n },
  });

  it('queues a test without waiting for the endpoint, then delivers it signed, with its delivery id (even while disabled)', async () => {
    await clear();
    const hook = await endpoint({ enabled: false });
    receiver.answer = () => 'hang';
    const res = await asStaff(`${BASE}/${hook.id}/test`, { method: 'POST' });
    expect(res.status).toBe(202);
    const { delivery_id } = (await res.json()) as { delivery_id: string };
    expect(receiver.received).toEqual([]);
    receiver.answer = () => 204;
    expect(await deliverDue(deps)).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    expect(got!.headers['x-felis-delivery']).toBe(delivery_id);
    expect(got!.headers['x-felis-event']).toBe('webhook.test');
    expect(verify(hook.secret, got!)).toBe(true);
    expect(verify('whsec_wrong', got!)).toBe(false);
    expect(JSON.parse(got!.body)).toMatchObject({ type: 'webhook.test', subject: { kind: 'webhook', id: hook.id } });
    const page = (await (await asStaff(`${BASE}/${hook.id}/deliveries`)).json()) as { deliveries: Array<Record<string, unknown>>; total: number };
    expect(page.total).toBe(1);
    expect(page.deliveries[0]).toMatchObject({ id: delivery_id, status: 'delivered', attempts: 1, last_status: 204, last_error: null });
    await asStaff(`${BASE}/${hook.id}`, { method: 'DELETE' });
  });

  it('sends only the subscribed types to enabled endpoints, and a Discord-compatible body when asked', async () => {
    await clear();
    const discord = await endpoint({ format: 'discord', events: ['backup.failed'] });
    const other = await endpoint({ events: ['build.blocked'] });
    const disabled = await endpoint({ enabled: false });
    expect(await raiseEvent(deps.database.db, event(1))).toBe(1);
    await deliverDue(deps);
    expect(receiver.received).toHaveLength(1);
    const body = JSON.parse(receiver.received[0]!.body) as { content: string; embeds: Array<{ title: string; description: string }> };
    expect(body.content).toBe('backup 1 failed');
    expect(body.embeds[0]).toMatchObject({ title: 'backup.failed', description: 'backup 1 failed' });
    expect(verify(discord.secret, receiver.received[0]!)).toBe(true);
    for (const h of [discord, other, disabled]) await asStaff(`${BASE}/${h.id}`, { method: 'DELETE' });
  });

  it('a receiver down for a while, and a restart in between, still get every event, with the same delivery ids', async () => {
    await clear();
    const hook = await endpoint({});
    const port = receiver.port;
    await receiver.stop();
    await raiseEvent(deps.database.db, event(1));
    await raiseEvent(deps.database.db, event(2));
    // A round tries a failing endpoint once: the other delivery waits for the next round.
    expect(await deliverDue(deps)).toBe(1);
    expect(await deliverDue(deps)).toBe(1);
    const rows = await deps.database.db.select().from(webhookDeliveries);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['pending', 1],
      ['pending', 1],
    ]);
    expect(rows.every((r) => r.lastError && r.nextAttemptAt.getTime() === deps.clock.now().getTime() + RETRY_DELAYS_S[0]! * 1000)).toBe(true);
    // Not due yet: nothing is sent.
    expect(await deliverDue(deps)).toBe(0);

    // "Restart": another process (new deps, new replica name) on the same database, the receiver back.
    const restarted = createTestDeps(database(), { env: LOCAL });
    restarted.clock.set(deps.clock.now());
    restarted.clock.advance(RETRY_DELAYS_S[0]! * 1000);
    await receiver.start(port);
    // The receiver answers 500 to the first attempt it sees: a retry follows.
    let first = true;
    receiver.answer = () => (first ? ((first = false), 500) : 200);
    await deliverDue(restarted);
    restarted.clock.advance(RETRY_DELAYS_S[1]! * 1000);
    await deliverDue(restarted);
    const ids = new Set(rows.map((r) => r.id));
    const seen = receiver.received.map((r) => r.headers['x-felis-delivery'] as string);
    expect(new Set(seen)).toEqual(ids);
    expect(seen).toHaveLength(3);
    for (const got of receiver.received) expect(verify(hook.secret, got)).toBe(true);
    const after = await deps.database.db.select().from(webhookDeliveries);
    expect(after.every((r) => r.status === 'delivered')).toBe(true);
    await asStaff(`${BASE}/${hook.id}`, { method: 'DELETE' });
  });

  it('gives up after the last attempt, counted in felis_webhook_deliveries_total', async () => {
    await clear();
    const hook = await endpoint({});
    receiver.answer = () => 503;
    const counted = async (outcome: string) => {
      const { values } = await deps.metrics.registry.getSingleMetric('felis_webhook_deliveries_total')!.get();
      return values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    };
    const [failedBefore, gaveUpBefore] = [await counted('failed'), await counted('gave_up')];
    await raiseEvent(deps.database.db, event(3));
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await deliverDue(deps);
      deps.clock.advance(9 * 3600_000);
    }
    expect(receiver.received).toHaveLength(MAX_ATTEMPTS);
    const [row] = await deps.database.db.select().from(webhookDeliveries);
    expect(row).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, lastStatus: 503 });
    expect(await deliverDue(deps)).toBe(0);
    expect(await counted('gave_up')).toBe(gaveUpBefore + 1);
    expect(await counted('failed')).toBe(failedBefore + MAX_ATTEMPTS - 1);
    await asStaff(`${BASE}/${hook.id}`, { method: 'DELETE' });
  });

  it('raises a server that fails or gives up once, however many replicas see it', async () => {
    await clear();
    const hook = await endpoint({ events: ['server.start_failed', 'server.start_gave_up'] });
    deps.cluster.addServer({ name: 'wobbly', subdomain: 'wobbly', labels: {} });
    await deps.serverCache.ready();
    // Two replicas' tasks on the same cache stand for two caches that see the same transitions.
    const tasks = [serverEventsTask(deps), serverEventsTask(deps)];
    for (const t of tasks) t.start();
    deps.cluster.fail('wobbly', false);
    deps.cluster.fail('wobbly', true);
    for (const t of tasks) await t.stop();
    const rows = await deps.database.db.select().from(webhookDeliveries);
    expect(rows.map((r) => r.eventType).sort()).toEqual(['server.start_failed', 'server.start_gave_up']);
    await deliverDue(deps);
    expect(receiver.received.map((r) => JSON.parse(r.body).subject)).toEqual([
      { kind: 'server', id: 'wobbly' },
      { kind: 'server', id: 'wobbly' },
    ]);
    await asStaff(`${BASE}/${hook.id}`, { method: 'DELETE' });
  });
});

describe('webhooks: an endpoint that keeps failing holds no other endpoint', () => {
  const database = useTestDatabase();
  const healthy = new Receiver();
  const dead = new Receiver();
  afterAll(async () => {
    await healthy.stop();
    await dead.stop();
  });

  it('delivers to a healthy endpoint in the first round while a dead one has 60 older deliveries due, tries the dead one once a round, and pauses it after failures in a row until it answers again', async () => {
    await healthy.start();
    await dead.start();
    const deadPort = dead.port;
    // Nothing listens there any more: every attempt fails without an answer.
    await dead.stop();
    const deps = createTestDeps(database(), { env: LOCAL });
    const { external } = createTestApps(deps);
    const staff = await createUser(deps, { role: 'owner' });
    const { headers } = await signIn(deps, { userId: staff.id });
    const create = async (body: Record<string, unknown>) => {
      const res = await external.request(BASE, jsonRequest('POST', body, headers));
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const deadId = await create({ name: 'dead', url: `http://127.0.0.1:${deadPort}/hook`, events: ['backup.failed'] });
    await create({ name: 'healthy', url: healthy.url, events: ['backup.corrupt'] });
    for (let n = 0; n < 60; n++) await raiseEvent(deps.database.db, { type: 'backup.failed', at: deps.clock.now(), summary: `f${n}`, subject: { kind: 'backup', id: `f${n}` } });
    deps.clock.advance(1);
    await raiseEvent(deps.database.db, { type: 'backup.corrupt', at: deps.clock.now(), summary: 'c', subject: { kind: 'backup', id: 'c' } });

    const deadAttempts = async () => {
      const rows = await deps.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, deadId));
      return rows.reduce((sum, r) => sum + r.attempts, 0);
    };
    await deliverDue(deps);
    expect(healthy.received).toHaveLength(1);
    expect(await deadAttempts()).toBe(1);

    // Each round tries the failing endpoint once, until CIRCUIT_THRESHOLD failures in a row open its circuit.
    for (let round = 2; round <= CIRCUIT_THRESHOLD; round++) await deliverDue(deps);
    expect(await deadAttempts()).toBe(CIRCUIT_THRESHOLD);
    expect(await deliverDue(deps)).toBe(0);
    expect(await deadAttempts()).toBe(CIRCUIT_THRESHOLD);
    const listed = (await (await external.request(BASE, { headers })).json()) as { webhooks: Array<{ id: string; paused_until: string | null }> };
    const paused = listed.webhooks.find((w) => w.id === deadId)!;
    expect(Date.parse(paused.paused_until!)).toBeGreaterThan(deps.clock.now().getTime());

    // The receiver comes back: once the pause is over, a round's first success closes the circuit and every event arrives once.
    await dead.start(deadPort);
    for (let round = 0; round < 30 && (await deps.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.status, 'pending'))).length > 0; round++) {
      deps.clock.advance(3600_000);
      await deliverDue(deps);
    }
    expect(new Set(dead.received.map((r) => r.headers['x-felis-delivery'])).size).toBe(60);
    // Hours later: a new staff session reads the list.
    const again = await signIn(deps, { userId: staff.id });
    const after = (await (await external.request(BASE, { headers: again.headers })).json()) as { webhooks: Array<{ id: string; paused_until: string | null }> };
    expect(after.webhooks.find((w) => w.id === deadId)!.paused_until).toBeNull();
  });
});

describe('webhooks: a name that resolves into a forbidden network is never called', () => {
  const database = useTestDatabase();
  const receiver = new Receiver();
  afterAll(() => receiver.stop());

  it('gives up at once, and the receiver hears nothing', async () => {
    await receiver.start();
    const deps = createTestDeps(database());
    const { external } = createTestApps(deps);
    const staff = await createUser(deps, { role: 'owner' });
    const { headers } = await signIn(deps, { userId: staff.id });
    // A name is accepted (it may resolve elsewhere later); the check is at each connection.
    const res = await external.request(BASE, jsonRequest('POST', { name: 'local', url: `http://localhost:${receiver.port}/hook` }, headers));
    expect(res.status).toBe(201);
    await raiseEvent(deps.database.db, { type: 'backup.corrupt', at: deps.clock.now(), summary: 's', subject: { kind: 'backup', id: 'b' } });
    await deliverDue(deps);
    expect(receiver.received).toEqual([]);
    const [row] = await deps.database.db.select().from(webhookDeliveries);
    expect(row!.status).toBe('failed');
    expect(row!.lastError).toMatch(/forbidden/);
  });
});

describe('webhooks: an endpoint stored with a loopback address in another spelling is never called', () => {
  const database = useTestDatabase();
  const receiver = new Receiver();
  afterAll(() => receiver.stop());

  it('gives up at once on [::], [::ffff:7f00:1] and NAT64 forms, and the receiver on ::1 hears nothing', async () => {
    await receiver.start(0, '::1');
    // Stored while the setting allowed every address (or before the check knew these spellings).
    const lax = createTestDeps(database(), { env: LOCAL });
    const staff = await createUser(lax, { role: 'owner' });
    const { headers } = await signIn(lax, { userId: staff.id });
    for (const host of ['[::]', '[0::]', '[::0.0.0.0]', '[64:ff9b::7f00:1]']) {
      const res = await createTestApps(lax).external.request(BASE, jsonRequest('POST', { name: host, url: `http://${host}:${receiver.port}/hook` }, headers));
      expect(res.status, host).toBe(201);
    }
    const deps = createTestDeps(database());
    await raiseEvent(deps.database.db, { type: 'backup.corrupt', at: deps.clock.now(), summary: 's', subject: { kind: 'backup', id: 'b' } });
    expect(await deliverDue(deps)).toBe(4);
    expect(receiver.received).toEqual([]);
    const rows = await deps.database.db.select().from(webhookDeliveries);
    expect(rows.map((r) => r.status)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(rows.every((r) => /forbidden/.test(r.lastError ?? ''))).toBe(true);
  });
});

describe('webhooks: tiers and bodies', () => {
  const database = useTestDatabase();
  const id = '00000000-0000-4000-8000-000000000000';
  describeTierMatrix(database, 'admin', [
    { method: 'get', path: BASE },
    { method: 'post', path: BASE, body: { name: 'x', url: 'https://hooks.example.com/x' } },
    { method: 'patch', path: `${BASE}/${id}`, body: { enabled: true } },
    { method: 'delete', path: `${BASE}/${id}` },
    { method: 'post', path: `${BASE}/${id}/test` },
    { method: 'get', path: `${BASE}/${id}/deliveries` },
  ]);
  const staff = async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps, { role: 'owner' })).id })).headers;
  describeBadBodies(database, [
    { method: 'POST', path: BASE, headers: staff },
    { method: 'PATCH', path: `${BASE}/${id}`, headers: staff },
  ]);
});
