import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { leases } from '../db/schema/coordination.js';
import { useTestDatabase } from '../../test/helpers/database.js';
import { createLogger } from '../lib/logger.js';
import { ManualClock } from '../lib/clock.js';
import { backgroundLoop, closingTask, Leadership, runOnOneReplica, TaskList, type BackgroundTask, type LoopDeps } from './loops.js';
import { holdLease, LEASE_KEYS, leaseOf, leasePrefix, releaseLease, releasePreviousLives, renewLease, sweepLapsedLeases, takeLease } from './leases.js';

const log = createLogger('silent');
let serial = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++serial}`;

describe('leases', () => {
  const database = useTestDatabase();

  it('lets exactly one of many racing holders take a lease, and another only once it lapsed', async () => {
    const { db } = database();
    const now = new Date('2026-06-01T12:00:00.000Z');
    const key = LEASE_KEYS.world(unique('w'));
    const claims = Array.from({ length: 12 }, (_, i) => takeLease(db, now, { key, holder: `h${i}`, purpose: 'backup', ttlMs: 60_000 }));
    const won = await Promise.all(claims);
    expect(won.filter(Boolean)).toHaveLength(1);
    const holder = `h${won.indexOf(true)}`;
    expect(await leaseOf(db, key)).toMatchObject({ holder, purpose: 'backup' });

    expect(await takeLease(db, new Date(now.getTime() + 59_999), { key, holder: 'late', purpose: 'restore', ttlMs: 60_000 })).toBe(false);
    // Its own holder may keep it (orOwn) without losing when it was first taken.
    expect(await takeLease(db, now, { key, holder, purpose: 'backup', ttlMs: 60_000 }, { orOwn: true })).toBe(true);
    expect(await takeLease(db, new Date(now.getTime() + 60_001), { key, holder: 'late', purpose: 'restore', ttlMs: 60_000 })).toBe(true);
    expect(await leaseOf(db, key)).toMatchObject({ holder: 'late', purpose: 'restore' });
    // The old holder learns at its next renewal that it lost the lease.
    expect(await renewLease(db, new Date(now.getTime() + 60_002), key, holder, 60_000)).toBe(false);
    await releaseLease(db, key, holder); // not its lease: nothing happens
    expect(await leaseOf(db, key)).toMatchObject({ holder: 'late' });
    await releaseLease(db, key, 'late');
    expect(await leaseOf(db, key)).toBeUndefined();
  });

  it("releases a previous life's leases at start-up: its own, those it took for jobs when asked, never another pod's (issue 30, item 6)", async () => {
    const { db } = database();
    const now = new Date('2026-06-01T12:00:00.000Z');
    const pod = unique('pod');
    const [loop, leader, lock, jobLock, other, current] = ['loop', 'leader', 'lock', 'job', 'other', 'current'].map((k) => LEASE_KEYS.loop(unique(k)));
    const claim = (key: string, holder: string, replica?: string) => takeLease(db, now, { key: key!, holder, purpose: 'p', ttlMs: 60_000, ...(replica ? { replica } : {}) });
    await claim(loop!, `${pod}/dead`);
    await claim(leader!, `${pod}/dead`);
    await claim(lock!, unique('job-id'), `${pod}/dead`);
    // A cluster Job renewing its own lock (keepLock) clears the replica: it outlives the pod's life.
    await claim(jobLock!, 'job-7', `${pod}/dead`);
    expect(await takeLease(db, now, { key: jobLock!, holder: 'job-7', purpose: 'p', ttlMs: 60_000 }, { orOwn: true })).toBe(true);
    await claim(other!, `${pod}x/alive`);
    await claim(current!, `${pod}/alive`);

    const withoutTaken = await releasePreviousLives(db, { prefix: `${pod}/`, current: `${pod}/alive` });
    expect(withoutTaken.sort()).toEqual([loop!, leader!].sort());
    expect(await releasePreviousLives(db, { prefix: `${pod}/`, current: `${pod}/alive`, taken: true })).toEqual([lock!]);
    for (const key of [jobLock!, other!, current!]) expect(await leaseOf(db, key)).toBeDefined();
    await Promise.all([jobLock!, other!, current!].map((key) => db.delete(leases).where(eq(leases.key, key))));
  });

  it('renews without ever shortening, and sweeps only lapsed leases of one kind', async () => {
    const { db } = database();
    const now = new Date('2026-06-01T12:00:00.000Z');
    const loop = LEASE_KEYS.loop(unique('l'));
    const world = LEASE_KEYS.world(unique('w'));
    await takeLease(db, now, { key: loop, holder: 'a', purpose: 'loop', ttlMs: 600_000 });
    await takeLease(db, now, { key: world, holder: 'a', purpose: 'backup', ttlMs: 1_000 });
    expect(await renewLease(db, now, loop, 'a', 60_000)).toBe(true);
    expect((await leaseOf(db, loop))?.leaseUntil.getTime()).toBe(now.getTime() + 600_000);

    const later = new Date(now.getTime() + 2_000);
    expect(await sweepLapsedLeases(db, later, leasePrefix('loop'))).toEqual([]);
    expect(await sweepLapsedLeases(db, later, leasePrefix('world'))).toContain(world);
    expect(await leaseOf(db, world)).toBeUndefined();
    expect(await leaseOf(db, loop)).toBeDefined();
  });

  it('keeps a held lease alive in real time until released', async () => {
    const { db } = database();
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const key = LEASE_KEYS.world(unique('held'));
    await takeLease(db, clock.now(), { key, holder: 'me', purpose: 'file_write', ttlMs: 1_000 });
    const held = holdLease({ db, clock, log }, { key, holder: 'me', ttlMs: 1_000 }, 20);
    clock.advance(900);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await leaseOf(db, key))?.leaseUntil.getTime()).toBe(clock.now().getTime() + 1_000);
    await held.release();
    expect(await leaseOf(db, key)).toBeUndefined();
  });
});

describe('loops on one replica', () => {
  const database = useTestDatabase();
  const replica = (name: string, clock: ManualClock): LoopDeps => ({ db: database().db, clock, log, replica: name });

  it('runs a round on exactly one of two racing replicas; the lease covers the interval, then the other may run', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const name = unique('round');
    let runs = 0;
    const round = async () => void runs++;
    const ran = await Promise.all([runOnOneReplica(replica('a', clock), name, 120_000, round), runOnOneReplica(replica('b', clock), name, 120_000, round)]);
    expect(ran.filter(Boolean)).toHaveLength(1);
    expect(runs).toBe(1);
    const loser = ran[0] ? 'b' : 'a';
    clock.advance(119_000);
    expect(await runOnOneReplica(replica(loser, clock), name, 120_000, round)).toBe(false);
    clock.advance(1_001);
    expect(await runOnOneReplica(replica(loser, clock), name, 120_000, round)).toBe(true);
    expect(runs).toBe(2);
  });

  it('stops a loop only after the round under way has ended', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    let release!: () => void;
    let began!: () => void;
    const started = new Promise<void>((resolve) => (began = resolve));
    const steps: string[] = [];
    const loop = backgroundLoop(replica('a', clock), {
      name: unique('stop'),
      replicas: 'every',
      intervalMs: 60_000,
      firstAfterMs: 1,
      round: async () => {
        steps.push('round began');
        began();
        await new Promise<void>((resolve) => (release = resolve));
        steps.push('round ended');
      },
    });
    loop.start();
    await started;
    const stopped = loop.stop().then(() => steps.push('stopped'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await stopped;
    expect(steps).toEqual(['round began', 'round ended', 'stopped']);
  });

  it('logs a failed round and goes on with the next', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    let calls = 0;
    const twice = new Promise<void>((resolve) => {
      const loop = backgroundLoop(replica('a', clock), {
        name: unique('fail'),
        replicas: 'one',
        intervalMs: 5,
        firstAfterMs: 1,
        round: async () => {
          calls += 1;
          if (calls === 2) {
            resolve();
            void loop.stop();
          }
          clock.advance(ROUND_GAP_MS); // each round's lease has lapsed by the next one
          throw new Error('this round fails');
        },
      });
      loop.start();
    });
    await twice;
    expect(calls).toBe(2);
  });
});

const ROUND_GAP_MS = 61_000;

describe('leadership', () => {
  const database = useTestDatabase();

  it('lets one of two replicas lead; when the leader dies the other takes over within 15 s', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const name = unique('leader');
    const a = new Leadership({ db: database().db, clock, replica: 'a' }, { name });
    const b = new Leadership({ db: database().db, clock, replica: 'b' }, { name });
    const leads = { a: 0, b: 0 };
    for (let i = 0; i < 10; i += 1) {
      const [la, lb] = await Promise.all([a.acquire(), b.acquire()]);
      if (la) leads.a += 1;
      if (lb) leads.b += 1;
      clock.advance(2_000);
    }
    expect([leads.a, leads.b].sort((x, y) => x - y)).toEqual([0, 10]);
    const [leader, follower] = leads.a > 0 ? [a, b] : [b, a];

    // The leader dies (no release, no more renewals): the follower keeps trying every 2 s.
    const diedAt = clock.now().getTime();
    while (!(await follower.acquire())) {
      clock.advance(2_000);
      expect(clock.now().getTime() - diedAt).toBeLessThanOrEqual(15_000);
    }
    expect(leader.holds()).toBe(false);
    // The old leader comes back: it finds the lease held and stands by.
    expect(await leader.acquire()).toBe(false);
    await follower.release();
    expect(await leader.acquire()).toBe(true);
  });

  it('stops acting within its renew deadline when it cannot reach the database, before anyone may take over', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00.000Z');
    const name = unique('cut');
    const { db } = database();
    let cut = false;
    // The same database, as seen by a replica whose connection is cut while `cut` holds: every
    // statement it builds fails when awaited.
    const failing: object = new Proxy(() => failing, {
      get: (_target, prop) => (prop === 'then' ? (_ok: unknown, fail: (err: Error) => void) => fail(new Error('connection cut')) : () => failing),
    });
    const severed = new Proxy(db, { get: (target, prop) => (cut && prop === 'insert' ? () => failing : Reflect.get(target, prop)) });
    const a = new Leadership({ db: severed, clock, replica: 'a' }, { name });
    expect(await a.acquire()).toBe(true);
    cut = true;
    clock.advance(5_000);
    expect(await a.acquire()).toBe(true); // not renewed, but within its renew deadline
    clock.advance(2_000);
    expect(await a.acquire()).toBe(false); // 7 s without a renewal: it stops acting
    expect(a.holds()).toBe(false);
    // The lease itself lasts 10 s, so another replica can only take it after this one stopped.
    const b = new Leadership({ db, clock, replica: 'b' }, { name });
    // Its first sight of the record: a whole lease of its own time starts now (client-go's rule).
    expect(await b.acquire()).toBe(false);
    clock.advance(3_000);
    expect(await b.acquire()).toBe(false);
    clock.advance(7_000);
    expect(await b.acquire()).toBe(true);
  });

  it("times a takeover by when the follower last saw the record change, never by the leader's clock: an hour of skew either way takes over neither early nor late", async () => {
    const name = unique('skew');
    const { db } = database();
    const clocks = { a: new ManualClock('2026-06-01T12:00:00.000Z'), ahead: new ManualClock('2026-06-01T13:00:00.000Z'), behind: new ManualClock('2026-06-01T11:00:00.000Z') };
    const advance = (ms: number) => Object.values(clocks).forEach((c) => c.advance(ms));
    const a = new Leadership({ db, clock: clocks.a, replica: 'a' }, { name });
    const ahead = new Leadership({ db, clock: clocks.ahead, replica: 'ahead' }, { name });
    const behind = new Leadership({ db, clock: clocks.behind, replica: 'behind' }, { name });
    expect(await a.acquire()).toBe(true);
    // For a minute the leader renews every 2 s. To the follower an hour ahead, the lease's own
    // lease_until is long past at every look; it must not take over a living leader.
    for (let i = 0; i < 30; i += 1) {
      advance(2_000);
      expect(await a.acquire()).toBe(true);
      expect(await ahead.acquire()).toBe(false);
      expect(await behind.acquire()).toBe(false);
    }
    // The leader dies. Both followers see the record stand still; one of them takes over once it
    // has for a whole lease (10 s) by its own clock, and not before.
    let stillFor = 0;
    for (;;) {
      advance(2_000);
      stillFor += 2_000;
      const [byAhead, byBehind] = await Promise.all([ahead.acquire(), behind.acquire()]);
      if (byAhead || byBehind) {
        expect(byAhead && byBehind).toBe(false);
        break;
      }
      expect(stillFor).toBeLessThan(14_000);
    }
    expect(stillFor).toBeGreaterThanOrEqual(10_000);
    expect(a.holds()).toBe(false);
    // The old leader comes back and finds the lease held.
    expect(await a.acquire()).toBe(false);
  });
});

describe('the task list', () => {
  it('starts tasks in order and stops them in the reverse order, past one that fails to stop', async () => {
    const steps: string[] = [];
    const named = (name: string, failStop = false): BackgroundTask => ({
      name,
      start: () => void steps.push(`start ${name}`),
      stop: async () => {
        steps.push(`stop ${name}`);
        if (failStop) throw new Error('stuck');
      },
    });
    const list = new TaskList(log).add(named('cache'), named('sweep', true), named('controller'));
    list.start();
    await list.stop();
    await list.stop(); // a second stop does nothing
    expect(steps).toEqual(['start cache', 'start sweep', 'start controller', 'stop controller', 'stop sweep', 'stop cache']);
  });

  it('closes what the features made even when it never started (a service stopped while waiting for its database)', async () => {
    const steps: string[] = [];
    const loop: BackgroundTask = { name: 'sweep', start: () => void steps.push('start sweep'), stop: async () => void steps.push('stop sweep') };
    const list = new TaskList(log).add(closingTask('cache', () => void steps.push('close cache')), loop, closingTask('hubs', () => void steps.push('close hubs')));
    await list.stop();
    await list.stop(); // a second stop does nothing
    expect(steps).toEqual(['close hubs', 'close cache']);
  });
});
