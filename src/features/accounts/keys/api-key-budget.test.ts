import { describe, expect, it } from 'vitest';
import { KeyBudgets, type ClaimSlice } from './api-key-budget.js';

/**
 * The per-key limit's slices (api-key-budget.ts) over a stand-in for the key's row: the minute's
 * claimed count, as the claim statement keeps it, shared by every replica (each a KeyBudgets).
 */
function sharedRow(limit: number) {
  const row = { window: 0, count: 0, claims: 0 };
  const claim: ClaimSlice = async (window, want) => {
    await Promise.resolve(); // a round trip: requests in flight meanwhile wait for it
    row.claims++;
    if (row.window !== window.getTime()) Object.assign(row, { window: window.getTime(), count: 0 });
    const granted = Math.max(0, Math.min(want, limit - row.count));
    row.count += granted;
    return granted;
  };
  return { row, claim };
}

const at = (seconds: number) => new Date(Date.UTC(2026, 5, 1, 12, 0, seconds));

describe('the per-key limit, claimed a slice at a time', () => {
  it('admits exactly the limit in a minute on one replica, with far fewer claims than requests, and again the next minute', async () => {
    const limit = 600;
    const { row, claim } = sharedRow(limit);
    const budgets = new KeyBudgets();
    let admitted = 0;
    for (let i = 0; i < limit + 50; i++) if (await budgets.take('k', at(10), limit, claim)) admitted++;
    expect(admitted).toBe(limit);
    // Slices double from 1 up to limit/16 (37): 1+2+…+32 = 63, then 37 at a time, and the refusal's claim.
    expect(row.claims).toBeLessThanOrEqual(6 + Math.ceil((limit - 63) / 37) + 1);
    expect(await budgets.take('k', at(60), limit, claim)).toBe(true);
  });

  it('never admits more than the limit over several replicas, and strands at most one slice on a replica that stops asking', async () => {
    const limit = 600;
    const { claim } = sharedRow(limit);
    const replicas = [new KeyBudgets(), new KeyBudgets(), new KeyBudgets()];
    let admitted = 0;
    for (let i = 0; i < 3 * limit; i++) if (await replicas[i % 3]!.take('k', at(5), limit, claim)) admitted++;
    expect(admitted).toBe(limit);

    // The next minute, one replica takes 100 and goes quiet: the others still get all but its unspent slice.
    const { claim: next } = sharedRow(limit);
    for (let i = 0; i < 100; i++) expect(await replicas[0]!.take('k', at(70), limit, next)).toBe(true);
    let others = 0;
    for (let i = 0; i < 2 * limit; i++) if (await replicas[1 + (i % 2)]!.take('k', at(70), limit, next)) others++;
    expect(others).toBeLessThanOrEqual(limit - 100);
    expect(others).toBeGreaterThanOrEqual(limit - 100 - Math.floor(limit / 16));
  });

  it('makes the requests that find the slice empty wait for one claim together', async () => {
    const { row, claim } = sharedRow(600);
    const budgets = new KeyBudgets();
    const answers = await Promise.all(Array.from({ length: 50 }, () => budgets.take('k', at(1), 600, claim)));
    expect(answers.every(Boolean)).toBe(true);
    // 50 at once: claims of 1, 2, 4, 8, 16, 32 (63 ≥ 50), one after another, not one per request.
    expect(row.claims).toBe(6);
  });

  it('refuses every replica once the database has nothing left this minute, whoever claimed it', async () => {
    const { row, claim } = sharedRow(10);
    Object.assign(row, { window: at(0).getTime(), count: 10 });
    expect(await new KeyBudgets().take('k', at(30), 10, claim)).toBe(false);
    expect(KeyBudgets.retryAfterSeconds(at(30))).toBe(30);
    expect(await new KeyBudgets().take('k', at(61), 10, claim)).toBe(true);
  });

  it('passes a failed claim on (the request fails) and claims again on the next request', async () => {
    const budgets = new KeyBudgets();
    await expect(budgets.take('k', at(1), 10, () => Promise.reject(new Error('database away')))).rejects.toThrow('database away');
    expect(await budgets.take('k', at(1), 10, async () => 1)).toBe(true);
  });
});
