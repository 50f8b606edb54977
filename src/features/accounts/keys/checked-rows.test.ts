import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { ChangeFeed } from '../../../db/change-feed.js';
import { CheckedRows } from './checked-rows.js';

/** A feed that says every change is delivered, with its subscribers in view. */
function feed() {
  const subscribers = new Set<() => void>();
  const changes: ChangeFeed = {
    seenThrough: () => performance.now(),
    subscribe: (onChange) => {
      subscribers.add(onChange);
      return () => subscribers.delete(onChange);
    },
    close: async () => {},
  };
  return { changes, subscribers, tell: () => [...subscribers].forEach((onChange) => onChange()) };
}

describe('the checked rows', () => {
  it('listen to the change feed from their first read, forget on its word, and after close keep nothing and listen no more', async () => {
    const { changes, subscribers, tell } = feed();
    const rows = new CheckedRows<string>(changes);
    expect(subscribers.size).toBe(0);
    let reads = 0;
    const read = async () => `row ${++reads}`;
    expect(await rows.read('a', 1_000, read)).toBe('row 1');
    expect(subscribers.size).toBe(1);
    expect(rows.read('a', 1_000, read)).toBe('row 1'); // a hit, synchronous
    tell();
    expect(await rows.read('a', 1_000, read)).toBe('row 2');
    expect(rows.read('a', 1_000, read)).toBe('row 2');
    rows.close();
    expect(subscribers.size).toBe(0);
    expect(await rows.read('a', 1_000, read)).toBe('row 3');
    expect(await rows.read('a', 1_000, read)).toBe('row 4');
    expect(subscribers.size).toBe(0);
  });

  it('keeps no row whose read a change of the feed overtook', async () => {
    const { changes, tell } = feed();
    const rows = new CheckedRows<string>(changes);
    let reads = 0;
    const first = rows.read('a', 1_000, async () => {
      tell(); // delivered while the first read is in flight
      return `row ${++reads}`;
    });
    expect(await first).toBe('row 1');
    expect(await rows.read('a', 1_000, async () => `row ${++reads}`)).toBe('row 2');
  });
});
