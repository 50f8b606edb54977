import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DependencyUnavailable } from '../lib/unavailable.js';
import { DatabaseGuard, isConnectionFailure } from './guard.js';

const never = () => new Promise<never>(() => {});
const refused = () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));

describe('DatabaseGuard', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function guard(probe: () => Promise<void>) {
    const events: string[] = [];
    const g = new DatabaseGuard({
      probe,
      onDown: () => events.push('down'),
      onUp: () => events.push('up'),
      queryDeadlineMs: 100,
      probeIntervalMs: 50,
    });
    return { g, events };
  }

  it('passes answers and a statement the database refused through unchanged', async () => {
    const { g } = guard(() => Promise.resolve());
    await expect(g.run(() => Promise.resolve(7), 100)).resolves.toBe(7);
    const refusedStatement = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(g.run(() => Promise.reject(refusedStatement), 100)).rejects.toBe(refusedStatement);
    expect(g.down).toBe(false);
  });

  it('gives up on a silent statement at its deadline, cancels it, and asks the probe before calling the database down', async () => {
    let probeAnswers = true;
    const { g, events } = guard(() => (probeAnswers ? Promise.resolve() : never()));
    const cancel = vi.fn();
    const slow = g.run(never, 100, cancel);
    const outcome = expect(slow).rejects.toBeInstanceOf(DependencyUnavailable);
    await vi.advanceTimersByTimeAsync(100);
    await outcome;
    expect(cancel).toHaveBeenCalledOnce();
    // The probe answered: only slow (a lock wait, say), not down.
    expect(g.down).toBe(false);

    probeAnswers = false;
    const silent = g.run(never, 100);
    const second = expect(silent).rejects.toBeInstanceOf(DependencyUnavailable);
    await vi.advanceTimersByTimeAsync(100);
    await second;
    expect(g.down).toBe(false); // the probe has not answered yet either: still deciding
    expect(events).toEqual([]);
  });

  it('trips on a failed connection, fails at once while down, and recovers on the first probe that answers', async () => {
    let up = false;
    const probe = vi.fn(() => (up ? Promise.resolve() : refused()));
    const { g, events } = guard(probe);
    const failure = await g.run(refused, 100).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(DependencyUnavailable);
    expect((failure as DependencyUnavailable).cause).toMatchObject({ code: 'ECONNREFUSED' });
    expect(g.down).toBe(true);
    expect(events).toEqual(['down']);

    const work = vi.fn(() => Promise.resolve(1));
    await expect(g.run(work, 100)).rejects.toBeInstanceOf(DependencyUnavailable);
    expect(work).not.toHaveBeenCalled();

    await vi.advanceTimersByTimeAsync(120);
    expect(g.down).toBe(true);
    up = true;
    await vi.advanceTimersByTimeAsync(60);
    expect(g.down).toBe(false);
    expect(events).toEqual(['down', 'up']);
    await expect(g.run(work, 100)).resolves.toBe(1);
    g.close();
  });

  it('knows a failed connection from a refused statement', () => {
    for (const code of ['ECONNREFUSED', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '08006']) {
      expect(isConnectionFailure(Object.assign(new Error(code), { code }))).toBe(true);
    }
    expect(isConnectionFailure(new Error('PGlite is closed'))).toBe(true);
    for (const code of ['23505', '22P02', '40001', undefined]) {
      expect(isConnectionFailure(Object.assign(new Error('x'), { code }))).toBe(false);
    }
  });
});
