import { describe, expect, it } from 'vitest';
import { createTestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addressKey } from './address.js';
import { takeToken } from './rate-limit.js';

describe('door rate limit bucket', () => {
  const database = useTestDatabase();

  it('allows a burst of 20, refuses the 21st with Retry-After, and refills 20 a minute', async () => {
    const deps = createTestDeps(database());
    const db = deps.database.db;
    const key = `t:${Math.random()}`;
    for (let i = 0; i < 20; i++) expect((await takeToken(db, key, deps.clock.now())).allowed).toBe(true);
    const refused = await takeToken(db, key, deps.clock.now());
    expect(refused).toEqual({ allowed: false, retryAfter: 3 });
    deps.clock.advance(3000);
    expect((await takeToken(db, key, deps.clock.now())).allowed).toBe(true);
    expect((await takeToken(db, key, deps.clock.now())).allowed).toBe(false);
    deps.clock.advance(10 * 60_000);
    for (let i = 0; i < 20; i++) expect((await takeToken(db, key, deps.clock.now())).allowed).toBe(true);
    expect((await takeToken(db, key, deps.clock.now())).allowed).toBe(false);
  });

  it('lets exactly the burst through 60 concurrent requests', async () => {
    const deps = createTestDeps(database());
    const key = `t:${Math.random()}`;
    const verdicts = await Promise.all(Array.from({ length: 60 }, () => takeToken(deps.database.db, key, deps.clock.now())));
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(20);
  });

  it('keys IPv4 by address and IPv6 by /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(addressKey('')).toBe('unknown');
    expect(addressKey('not-an-ip')).toBe('unknown');
  });
});
