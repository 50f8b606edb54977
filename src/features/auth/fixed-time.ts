import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Settles `work`'s outcome exactly `ms` after `startedAt` (a `performance.now()` reading), so that
 * the answer's time says nothing about which path the work took. Work still running at the deadline
 * goes on in the background and counts as done: `onLate` hears of its failure. `ms` 0 turns the
 * fixed time off (the outcome is settled when the work is).
 */
export async function settleAtFixedTime(
  work: Promise<void>,
  startedAt: number,
  ms: number,
  onLate: (err: unknown) => void,
): Promise<void> {
  if (ms === 0) return work;
  const outcome = work.then(
    () => ({ failed: false as const }),
    (err: unknown) => ({ failed: true as const, err }),
  );
  const deadline = sleep(Math.max(0, startedAt + ms - performance.now())).then(() => undefined);
  const first = await Promise.race([outcome, deadline]);
  if (first === undefined) {
    void outcome.then((late) => {
      if (late.failed) onLate(late.err);
    });
    return;
  }
  await deadline;
  if (first.failed) throw first.err;
}
