import { describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './work-queue.js';

/** A handler whose calls the test ends one by one. */
function gated() {
  const calls: Array<{ key: string; done: (err?: Error) => void }> = [];
  const handle = (key: string) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ key, done: (err) => (err ? reject(err) : resolve()) });
    });
  return { calls, handle };
}

describe('WorkQueue', () => {
  it('queues a key once however often it is added, and drains', async () => {
    const { calls, handle } = gated();
    const queue = new WorkQueue({ workers: 1, handle });
    queue.add('a');
    queue.add('b');
    queue.add('b');
    queue.add('a');
    queue.run();
    expect(calls.map((c) => c.key)).toEqual(['a']);
    expect(queue.depth).toBe(1);
    calls[0]!.done();
    await vi.waitFor(() => expect(calls.map((c) => c.key)).toEqual(['a', 'b']));
    calls[1]!.done();
    await queue.drained();
    expect(calls).toHaveLength(2);
  });

  it('never hands one key to two workers; a key added while handled is handled again after', async () => {
    const { calls, handle } = gated();
    const queue = new WorkQueue({ workers: 4, handle });
    queue.run();
    queue.add('a');
    queue.add('a');
    expect(calls.map((c) => c.key)).toEqual(['a']);
    calls[0]!.done();
    await vi.waitFor(() => expect(calls.map((c) => c.key)).toEqual(['a', 'a']));
    calls[1]!.done();
    await queue.drained();
  });

  it('lets other keys through while one handler hangs (one hung server slows only itself)', async () => {
    const { calls, handle } = gated();
    const queue = new WorkQueue({ workers: 2, handle });
    queue.run();
    queue.add('hung');
    queue.add('x');
    queue.add('y');
    queue.add('z');
    for (const key of ['x', 'y', 'z']) {
      await vi.waitFor(() => expect(calls.map((c) => c.key)).toContain(key));
      calls.find((c) => c.key === key)!.done();
    }
    expect(calls.find((c) => c.key === 'hung')).toBeDefined();
    calls[0]!.done();
    await queue.drained();
  });

  it('brings a failed key back after a back-off that doubles, and forgets the failures after a success', async () => {
    const errors: string[] = [];
    let failures = 2;
    const times: number[] = [];
    const queue = new WorkQueue({
      workers: 1,
      baseBackoffMs: 20,
      handle: async () => {
        times.push(performance.now());
        if (failures-- > 0) throw new Error('boom');
      },
      onError: (key) => errors.push(key),
    });
    queue.run();
    queue.add('a');
    await vi.waitFor(() => expect(times).toHaveLength(3));
    expect(errors).toEqual(['a', 'a']);
    expect(queue.requeues).toBe(2);
    // Timers never fire early: the first wait is at least 20 ms, the doubled second at least 40 ms.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(19);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(39);
    await queue.drained();
  });

  it('stops taking keys when paused, and drops what waited', async () => {
    const { calls, handle } = gated();
    const queue = new WorkQueue({ workers: 1, handle });
    queue.run();
    queue.add('a');
    queue.add('b');
    queue.addAfter('c', 10);
    const paused = queue.pause();
    calls[0]!.done();
    await paused;
    expect(queue.depth).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls.map((c) => c.key)).toEqual(['a']);
  });
});
