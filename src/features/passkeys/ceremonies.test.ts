import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { errorOf } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { panelAuthenticator, passkeyFixture, visitor, type PasskeyFixture } from '../../../test/helpers/passkeys.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import type { SoftAuthenticator } from '../../../test/helpers/soft-authenticator.js';
import { passkeyCeremonies, passkeyCredentials } from '../../db/schema/passkeys.js';
import { recordProof } from '../accounts/index.js';
import { CEREMONY_TTL_MS } from './ceremonies.js';

/** An account with one passkey, ready to sign in by e-mail. */
async function accountWithPasskey(f: PasskeyFixture): Promise<{ email: string; userId: string; authenticator: SoftAuthenticator }> {
  const email = `c-${randomUUID()}@example.com`;
  const user = await createUser(f.deps, { email });
  const authenticator = panelAuthenticator();
  expect((await f.register(await signIn(f.deps, { userId: user.id }), authenticator)).status).toBe(201);
  return { email, userId: user.id, authenticator };
}

async function finish(f: PasskeyFixture, email: string, assertion: unknown): Promise<[number, string]> {
  const res = await f.post('/api/v1/auth/passkey/login/finish', { email, assertion }, visitor());
  return [res.status, res.status === 200 ? 'signed in' : (await errorOf(res)).code];
}

const INVALID: [number, string] = [400, 'passkey_login_invalid'];

describe('passkey ceremonies', () => {
  const database = useTestDatabase();

  it('refuses a replayed assertion: the ceremony was spent by the first finish', async () => {
    const f = passkeyFixture(database());
    const { email, authenticator } = await accountWithPasskey(f);
    const assertion = authenticator.assert(await f.loginBegin(email));
    expect(await finish(f, email, assertion)).toEqual([200, 'signed in']);
    expect(await finish(f, email, assertion)).toEqual(INVALID);
    // Nor does it answer a newer ceremony: it signed the old challenge.
    await f.loginBegin(email);
    expect(await finish(f, email, assertion)).toEqual(INVALID);
  });

  it('refuses a counter that goes backwards, or stands still, as a cloned authenticator', async () => {
    const f = passkeyFixture(database());
    const { email, userId, authenticator } = await accountWithPasskey(f);
    expect(await finish(f, email, authenticator.assert(await f.loginBegin(email), { counter: 7 }))).toEqual([200, 'signed in']);
    expect(await finish(f, email, authenticator.assert(await f.loginBegin(email), { counter: 3 }))).toEqual(INVALID);
    expect(await finish(f, email, authenticator.assert(await f.loginBegin(email), { counter: 7 }))).toEqual(INVALID);
    const [row] = await f.deps.database.db.select().from(passkeyCredentials).where(eq(passkeyCredentials.userId, userId));
    expect(row!.counter).toBe(7);
    expect(await finish(f, email, authenticator.assert(await f.loginBegin(email), { counter: 8 }))).toEqual([200, 'signed in']);
  });

  it('refuses an assertion made for a foreign origin, and spends the ceremony anyway', async () => {
    const f = passkeyFixture(database());
    const { email, authenticator } = await accountWithPasskey(f);
    const options = await f.loginBegin(email);
    expect(await finish(f, email, authenticator.assert(options, { origin: 'https://panel.felis.test.evil.example' }))).toEqual(INVALID);
    // The genuine answer to the same ceremony comes too late: a failed finish deleted it.
    expect(await finish(f, email, authenticator.assert(options))).toEqual(INVALID);
  });

  it('refuses a ceremony past its 5 minutes (injected clock), and deletes it', async () => {
    const f = passkeyFixture(database());
    const { email, userId, authenticator } = await accountWithPasskey(f);
    const options = await f.loginBegin(email);
    f.deps.clock.advance(CEREMONY_TTL_MS);
    expect(await finish(f, email, authenticator.assert(options))).toEqual(INVALID);
    const left = await f.deps.database.db.select().from(passkeyCeremonies).where(eq(passkeyCeremonies.userId, userId));
    expect(left).toEqual([]);
    // One second short of the limit still works.
    const fresh = await f.loginBegin(email);
    f.deps.clock.advance(CEREMONY_TTL_MS - 1000);
    expect(await finish(f, email, authenticator.assert(fresh))).toEqual([200, 'signed in']);
  });

  it('a registration ceremony is single use too, and expires', async () => {
    const f = passkeyFixture(database());
    const user = await createUser(f.deps);
    const s = await signIn(f.deps, { userId: user.id });
    const authenticator = panelAuthenticator();
    const begin = (await (await f.request('/api/v1/account/passkey/register/begin', { method: 'POST', headers: s.headers })).json()) as never;
    f.deps.clock.advance(CEREMONY_TTL_MS);
    // The session proves itself again (registering is guarded), so only the ceremony's age is left to refuse.
    await recordProof(f.deps.database.db, s.tokenHash, 'passkey', f.deps.clock.now());
    const late = await f.post('/api/v1/account/passkey/register/finish', { attestation: authenticator.register(begin) }, s.headers);
    expect((await errorOf(late)).code).toBe('passkey_challenge_invalid');
  });

  it('lets exactly one of 50 concurrent finishes of one ceremony sign in', async () => {
    const f = passkeyFixture(database());
    const { email, authenticator } = await accountWithPasskey(f);
    const assertion = authenticator.assert(await f.loginBegin(email));
    const answers = await Promise.all(Array.from({ length: 50 }, () => finish(f, email, assertion)));
    expect(answers.filter(([status]) => status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a[0] === INVALID[0] && a[1] === INVALID[1])).toHaveLength(49);
  });

  it('lets exactly one of 50 concurrent discoverable finishes sign in', async () => {
    const f = passkeyFixture(database());
    const { authenticator } = await accountWithPasskey(f);
    const begin = (await (await f.post('/api/v1/auth/passkey/login/discoverable/begin', {}, visitor())).json()) as {
      publicKey: { challenge: string };
      login_id: string;
    };
    const body = { login_id: begin.login_id, assertion: authenticator.assert(begin.publicKey) };
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async () => (await f.post('/api/v1/auth/passkey/login/discoverable/finish', body, visitor())).status),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(49);
  });

  describe('caps on live discoverable ceremonies', () => {
    const begin = async (f: PasskeyFixture, ip: string): Promise<[number, string]> => {
      const res = await f.post('/api/v1/auth/passkey/login/discoverable/begin', {}, visitor(ip));
      return [res.status, res.status === 200 ? 'begun' : (await errorOf(res)).code];
    };
    const FULL: [number, string] = [429, 'too_many_challenges'];

    it('holds each network (an IPv4 host, an IPv6 /48) to its share', async () => {
      const f = passkeyFixture(database(), { WEBAUTHN_CHALLENGE_CAP: '100', WEBAUTHN_CHALLENGE_CAP_PER_NETWORK: '2' });
      expect(await begin(f, '198.51.100.7')).toEqual([200, 'begun']);
      expect(await begin(f, '198.51.100.7')).toEqual([200, 'begun']);
      expect(await begin(f, '198.51.100.7')).toEqual(FULL);
      expect(await begin(f, '198.51.100.8')).toEqual([200, 'begun']);
      // Two subnets of one /48 are one network; the next /48 is another.
      expect(await begin(f, '2001:db8:aa:1::1')).toEqual([200, 'begun']);
      expect(await begin(f, '2001:db8:aa:2::9')).toEqual([200, 'begun']);
      expect(await begin(f, '2001:db8:aa:ffff::1')).toEqual(FULL);
      expect(await begin(f, '2001:db8:ab::1')).toEqual([200, 'begun']);
      // Once they expire they no longer count.
      f.deps.clock.advance(CEREMONY_TTL_MS);
      expect(await begin(f, '198.51.100.7')).toEqual([200, 'begun']);
    });

    it('holds every network together to the global cap, with Retry-After', async () => {
      const f = passkeyFixture(database(), { WEBAUTHN_CHALLENGE_CAP: '3', WEBAUTHN_CHALLENGE_CAP_PER_NETWORK: '10' });
      await f.deps.database.db.delete(passkeyCeremonies);
      for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) expect(await begin(f, ip)).toEqual([200, 'begun']);
      const res = await f.post('/api/v1/auth/passkey/login/discoverable/begin', {}, visitor('192.0.2.4'));
      expect([res.status, res.headers.get('retry-after'), (await errorOf(res)).code]).toEqual([429, '60', 'too_many_challenges']);
    });

    it('holds under 30 concurrent begins from one network', async () => {
      const f = passkeyFixture(database(), { WEBAUTHN_CHALLENGE_CAP: '1000', WEBAUTHN_CHALLENGE_CAP_PER_NETWORK: '5' });
      // Thirty /64s of one /48: each its own door bucket, all one network.
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => begin(f, `2001:db8:cc:${i.toString(16)}::1`)));
      expect(answers.filter(([s]) => s === 200)).toHaveLength(5);
      expect(answers.filter((a) => a[0] === FULL[0] && a[1] === FULL[1])).toHaveLength(25);
    });
  });
});
