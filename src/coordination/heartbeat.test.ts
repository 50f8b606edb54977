import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import { ManualClock } from '../lib/clock.js';
import { createLogger } from '../lib/logger.js';
import { HeartbeatLost, ReplicaHeartbeat } from './heartbeat.js';
import { heldBy, LEASE_KEYS, leaseOf, releasePreviousLives, sweepLeases, takeLease } from './leases.js';

const log = createLogger('silent');
let serial = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++serial}`;
const HOUR = 3_600_000;

/**
 * Replica heartbeats (issue 32): a replica killed without goodbye is judged dead by each watcher
 * from its own observation only (its heartbeat stood still for the TTL across the watcher's reads),
 * whatever the clocks say; what it took for in-process work is then free at once.
 */
describe('replica heartbeats', () => {
  const database = useTestDatabase();

  /** A replica with its own clock (offset from `base` by `skewMs`) and its heartbeat. */
  function replica(name: string, skewMs = 0) {
    const clock = new ManualClock(new Date(Date.parse('2026-06-01T12:00:00.000Z') + skewMs));
    const heartbeat = new ReplicaHeartbeat({ db: database().db, clock, log, replica: name });
    return { name, clock, heartbeat };
  }
  /** The replicas of this test judged dead (other tests' heartbeats share the table). */
  const deadOf = (r: ReturnType<typeof replica>, pod: string) => r.heartbeat.deadReplicas().filter((n) => n.startsWith(pod));
  /** Real time passes for every replica alike; each beats unless it is dead. */
  async function pass(ms: number, step: number, replicas: ReturnType<typeof replica>[], dead: Set<string> = new Set()) {
    for (let t = 0; t < ms; t += step) {
      for (const r of replicas) r.clock.advance(step);
      for (const r of replicas) if (!dead.has(r.name)) await r.heartbeat.beat();
    }
  }

  it('judges a killed replica dead after its TTL by each watcher\'s clock, never early however skewed the clocks (an hour ahead, an hour behind)', async () => {
    const pod = unique('pod');
    const victim = replica(`${pod}-a/1`);
    const ahead = replica(`${pod}-b/1`, HOUR);
    const behind = replica(`${pod}-c/1`, -HOUR);
    const all = [victim, ahead, behind];
    const deaths: string[] = [];
    ahead.heartbeat.onDeath((r) => deaths.push(r));
    for (const r of all) await r.heartbeat.beat();
    // A minute of living together: nobody is judged dead, whatever its clock says of the others'.
    await pass(60_000, 2_000, all);
    for (const r of all) expect(deadOf(r, pod)).toEqual([]);

    // The victim takes a world lock for a job of its own process, then is killed (no goodbye).
    const world = LEASE_KEYS.world(unique('w'));
    expect(await takeLease(database().db, victim.clock.now(), { key: world, holder: 'job-1', purpose: 'backup', ttlMs: 60_000, replica: victim.name })).toBe(true);
    const killed = new Set([victim.name]);
    await pass(8_000, 2_000, all, killed);
    for (const r of [ahead, behind]) expect(deadOf(r, pod)).toEqual([]);
    // The lock is not free yet for the one behind (its lease reaches an hour past that clock)...
    expect(await takeLease(database().db, behind.clock.now(), { key: world, holder: 'job-2', purpose: 'backup', ttlMs: 60_000 }, { dead: behind.heartbeat.deadReplicas() })).toBe(false);
    await pass(4_000, 2_000, all, killed);
    expect(deadOf(ahead, pod)).toEqual([victim.name]);
    expect(deadOf(behind, pod)).toEqual([victim.name]);
    expect(deaths.filter((r) => r.startsWith(pod))).toEqual([victim.name]); // once
    // ...and now the one behind takes it over at once, 12 s after the kill, not after the lock's 60 s.
    expect(await heldBy(database().db, behind.clock.now(), world, 'job-1', behind.heartbeat.deadReplicas())).toBe(false);
    expect(await heldBy(database().db, behind.clock.now(), world, 'job-1')).toBe(true); // by its lease alone, still held
    expect(await takeLease(database().db, behind.clock.now(), { key: world, holder: 'job-2', purpose: 'backup', ttlMs: 60_000, replica: behind.name }, { dead: behind.heartbeat.deadReplicas() })).toBe(true);
    expect(await leaseOf(database().db, world)).toMatchObject({ holder: 'job-2', replica: behind.name });
    // A lease no replica took (a cluster Job's) is held whatever the dead list says, also when asked the other way round.
    const jobLock = LEASE_KEYS.world(unique('w'));
    await takeLease(database().db, behind.clock.now(), { key: jobLock, holder: 'job-in-cluster', purpose: 'backup', ttlMs: 60_000 });
    expect(await heldBy(database().db, behind.clock.now(), jobLock, 'job-in-cluster', behind.heartbeat.deadReplicas())).toBe(true);
    expect(await takeLease(database().db, behind.clock.now(), { key: jobLock, holder: 'job-4', purpose: 'backup', ttlMs: 60_000 }, { dead: behind.heartbeat.deadReplicas() })).toBe(false);
    // The survivor's lock is not the dead one's: the rule frees only what the dead replica took.
    expect(await takeLease(database().db, behind.clock.now(), { key: world, holder: 'job-3', purpose: 'backup', ttlMs: 60_000 }, { dead: behind.heartbeat.deadReplicas() })).toBe(false);
    await sweepLeases(database().db, behind.clock.now(), world, [behind.name]);
    for (const r of all) await r.heartbeat.goodbye();
  });

  it('counts a replica that said goodbye, or whose pod\'s next life removed its heartbeat, dead at once; the next life is alive and never revives the old one\'s locks', async () => {
    const pod = unique('pod');
    const watcher = replica(`${pod}-w/1`);
    const first = replica(`${pod}-x/1`);
    const leaving = replica(`${pod}-y/1`);
    for (const r of [watcher, first, leaving]) await r.heartbeat.beat();
    await watcher.heartbeat.beat();
    const world = LEASE_KEYS.world(unique('w'));
    await takeLease(database().db, first.clock.now(), { key: world, holder: 'job-old', purpose: 'restore', ttlMs: 60_000, replica: first.name });

    await leaving.heartbeat.goodbye();
    // The same pod comes back with the same POD_NAME: a new life, a new name, a new heartbeat.
    const second = replica(`${pod}-x/2`);
    await second.heartbeat.beat();
    // Its start-up releases what its previous life held, its heartbeat among them (not the lock: kept for this test).
    expect(await releasePreviousLives(database().db, { prefix: `${pod}-x/`, current: second.name })).toEqual([LEASE_KEYS.replica(first.name)]);
    await watcher.heartbeat.beat();
    expect(deadOf(watcher, pod).sort()).toEqual([first.name, leaving.name].sort());
    // The old life's lock is free for the watcher although a replica of that pod beats again.
    expect(await takeLease(database().db, watcher.clock.now(), { key: world, holder: 'job-new', purpose: 'restore', ttlMs: 60_000 }, { dead: watcher.heartbeat.deadReplicas() })).toBe(true);
    await sweepLeases(database().db, watcher.clock.now(), world, [watcher.name]);
    await second.heartbeat.goodbye();
    await watcher.heartbeat.goodbye();
  });

  it('a replica cut off from the database stops acting (its signals abort) before any watcher may judge it dead', async () => {
    const pod = unique('pod');
    const cut = replica(`${pod}-a/1`, 30 * 60_000);
    const watcher = replica(`${pod}-b/1`);
    await cut.heartbeat.beat();
    await watcher.heartbeat.beat();
    const work = cut.heartbeat.whileAlive();
    expect(cut.heartbeat.alive()).toBe(true);

    // The database no longer answers the cut-off replica: its beats fail, its deadline runs.
    let abortedAt: number | undefined;
    for (let t = 1_000; t <= 12_000; t += 1_000) {
      cut.clock.advance(1_000);
      watcher.clock.advance(1_000);
      cut.heartbeat.check();
      await watcher.heartbeat.beat();
      if (work.aborted && abortedAt === undefined) {
        abortedAt = t;
        expect(deadOf(watcher, pod)).toEqual([]);
      }
      if (deadOf(watcher, pod).length > 0) {
        expect(abortedAt).toBeDefined();
        expect(t).toBeGreaterThanOrEqual(10_000);
        break;
      }
    }
    expect(abortedAt).toBe(7_000);
    expect(work.reason).toBeInstanceOf(HeartbeatLost);
    expect(cut.heartbeat.whileAlive().aborted).toBe(true); // no new work while lost
    expect(deadOf(watcher, pod)).toEqual([cut.name]);

    // Back in touch: it beats again, the watcher sees the change, and it is alive for both.
    await cut.heartbeat.beat();
    await watcher.heartbeat.beat();
    expect(deadOf(watcher, pod)).toEqual([]);
    expect(cut.heartbeat.whileAlive().aborted).toBe(false);
    await cut.heartbeat.goodbye();
    await watcher.heartbeat.goodbye();
  });

  it('a watcher that could not read for a while judges nobody dead for it, and removes a long-dead heartbeat', async () => {
    const pod = unique('pod');
    const living = replica(`${pod}-a/1`);
    const watcher = replica(`${pod}-b/1`);
    const gone = replica(`${pod}-c/1`);
    for (const r of [living, gone, watcher]) await r.heartbeat.beat();
    // The watcher's reads fail for 30 s while the others go on beating (one was killed meanwhile).
    for (let t = 0; t < 30_000; t += 2_000) {
      for (const r of [living, gone, watcher]) r.clock.advance(2_000);
      await living.heartbeat.beat();
    }
    await watcher.heartbeat.beat();
    // One read after the gap: the killed replica's heartbeat stood still across it, the living one's moved.
    expect(deadOf(watcher, pod)).toEqual([gone.name]);
    // Long dead: the watcher removes the row (only the version it watched), and forgets it.
    for (const r of [living, watcher]) r.clock.advance(5 * 60_000);
    await living.heartbeat.beat();
    await watcher.heartbeat.beat();
    await watcher.heartbeat.forget();
    expect(await leaseOf(database().db, LEASE_KEYS.replica(gone.name))).toBeUndefined();
    expect(await leaseOf(database().db, LEASE_KEYS.replica(living.name))).toBeDefined();
    expect(deadOf(watcher, pod)).toEqual([]);
    await living.heartbeat.goodbye();
    await watcher.heartbeat.goodbye();
  });
});
