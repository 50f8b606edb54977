import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser } from '../../../test/helpers/sessions.js';
import { HASH_LIMITS, type WorkGate } from './hash-limit.js';
import { hashPassword } from './password.js';
import { passwordSignIn } from './password-service.js';

/** Waits (real time, the sign-in reads the database first) until `n` jobs queue at the gate. */
async function queuedBehind(gate: WorkGate, n: number): Promise<void> {
  for (const until = Date.now() + 10_000; gate.load.queued < n; ) {
    if (Date.now() > until) throw new Error(`the gate queues ${gate.load.queued}, not ${n}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(gate.load.queued).toBe(n);
}

describe('the password hashing gate under a flood of strangers (issue 30, item 9)', () => {
  const database = useTestDatabase();

  it('serves a known client ahead of strangers, and a refusal for a busy gate costs the account nothing', async () => {
    const deps = createTestDeps(database());
    const user = await createUser(deps, { username: 'alex', passwordHash: await hashPassword('correct horse battery') });
    const home = '198.51.100.7';
    // Alex signed in from home before (the session keeps the address).
    await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: home });

    // Strangers from many addresses fill the gate: every slot running and every stranger place queued.
    const gate = deps.hashGate;
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const strangers = Array.from({ length: HASH_LIMITS.running + HASH_LIMITS.waiting }, () => gate.run(() => held));
    expect(gate.load).toEqual({ active: HASH_LIMITS.running, queued: HASH_LIMITS.waiting });

    // Alex from a new address is refused while the gate is full, nineteen times over...
    const statuses: string[] = [];
    for (let i = 0; i < 19; i++) {
      const refused = await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: `203.0.113.${i + 1}` }).catch((err: { code?: string }) => err.code);
      statuses.push(String(refused));
    }
    expect(new Set(statuses)).toEqual(new Set(['rate_limited']));
    // ...but from home, Alex queues in the known lane and is served before the strangers' queue.
    const fromHome = passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: home });
    await queuedBehind(gate, HASH_LIMITS.waiting + 1);
    open();
    expect((await fromHome).userId).toBe(user.id);
    await Promise.all(strangers);

    // A live session cookie of the same account is a known client too, from a new address.
    const session = await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: home });
    let reopen!: () => void;
    const heldAgain = new Promise<void>((resolve) => (reopen = resolve));
    const strangersAgain = Array.from({ length: HASH_LIMITS.running + HASH_LIMITS.waiting }, () => gate.run(() => heldAgain));
    const stranger = await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: '192.0.2.50' }).catch((err: { code?: string }) => err.code);
    expect(stranger).toBe('rate_limited');
    const withCookie = passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: '192.0.2.51' }, session.token);
    await queuedBehind(gate, HASH_LIMITS.waiting + 1);
    reopen();
    expect((await withCookie).userId).toBe(user.id);
    await Promise.all(strangersAgain);

    // The browser's device cookie, given at a sign-in of the same account, is a known client from any
    // address, after a sign-out too (issue 43, item 12: a user on a new network during a flood).
    const earlier = await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: '198.51.100.99' });
    let reopenOnce = () => {};
    const heldOnce = new Promise<void>((resolve) => (reopenOnce = resolve));
    const strangersOnce = Array.from({ length: HASH_LIMITS.running + HASH_LIMITS.waiting }, () => gate.run(() => heldOnce));
    const otherDevice = passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: '192.0.2.60' }, undefined, 'a-device-token-nobody-was-given');
    expect(await otherDevice.catch((err: { code?: string }) => err.code)).toBe('rate_limited');
    const sameDevice = passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: '192.0.2.61' }, undefined, earlier.deviceToken);
    await queuedBehind(gate, HASH_LIMITS.waiting + 1);
    reopenOnce();
    const signedIn = await sameDevice;
    expect(signedIn.userId).toBe(user.id);
    expect(signedIn.deviceToken).not.toBe(earlier.deviceToken); // a new one at each sign-in
    await Promise.all(strangersOnce);
    // Another account's device cookie is no known client of this one.
    const other = await createUser(deps, { username: 'blake', passwordHash: await hashPassword('another good password') });
    const blake = await passwordSignIn(deps, { username: 'blake', password: 'another good password' }, { host: 'panel.felis.test', clientIp: '198.51.100.98' });
    expect(blake.userId).toBe(other.id);
    let reopenLast = () => {};
    const heldLast = new Promise<void>((resolve) => (reopenLast = resolve));
    const strangersLast = Array.from({ length: HASH_LIMITS.running + HASH_LIMITS.waiting }, () => gate.run(() => heldLast));
    expect(await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: '192.0.2.62' }, undefined, blake.deviceToken).catch((err: { code?: string }) => err.code)).toBe('rate_limited');
    reopenLast();
    await Promise.all(strangersLast);

    // The refusals did not use up the account's allowance (a burst of 10): Alex signs in again and again.
    for (let i = 0; i < 3; i++) {
      const again = await passwordSignIn(deps, { username: 'alex', password: 'correct horse battery' }, { host: 'panel.felis.test', clientIp: `203.0.113.${100 + i}` });
      expect(again.userId).toBe(user.id);
    }
  }, 60_000);
});
