import { DomainError } from '../../lib/errors.js';
import { answerOf, ERROR_STATUS } from '../../http/errors.js';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import type { MailAdapter } from '../../adapters/mail/types.js';
import { HASH_LIMITS, WorkGate } from './hash-limit.js';
import { hashPassword } from './password.js';

const PANEL = { Host: 'panel.felis.test' };
const PASSWORD = 'correct horse battery';
/** The TCP peer as Bun's adapter hands it to the app (`server.requestIP`). */
const peer = (address: string) => ({ requestIP: () => ({ address }) });

describe('abuse: hashing, door buckets, visitor addresses, attempt locks', () => {
  const database = useTestDatabase();
  let hash: string;
  beforeAll(async () => {
    hash = await hashPassword(PASSWORD);
  });
  const ipDeps = () => createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip' } });
  const address = () => `10.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}`;

  it('runs at most `running` jobs at once, queues at most `waiting`, and refuses the rest at once with 429 Retry-After', async () => {
    const gate = new WorkGate(2, 3);
    let active = 0;
    let peak = 0;
    const release: Array<() => void> = [];
    const job = () =>
      new Promise<void>((resolve) => {
        active += 1;
        peak = Math.max(peak, active);
        release.push(() => {
          active -= 1;
          resolve();
        });
      });
    const runs = Array.from({ length: 10 }, () => gate.run(job).then(() => 'done', (err: DomainError) => `${ERROR_STATUS[err.code]} ${answerOf(err).headers['Retry-After']}`));
    await Promise.resolve();
    expect(gate.load).toEqual({ active: 2, queued: 3 });
    while (release.length > 0 || gate.load.active > 0) {
      release.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    const outcomes = await Promise.all(runs);
    expect(outcomes.filter((o) => o === 'done')).toHaveLength(5);
    expect(outcomes.filter((o) => o === '429 1')).toHaveLength(5);
    expect(peak).toBe(2);
  });

  it('holds a hashing flood from one session to the account budget, while another user still signs in', { timeout: 120_000 }, async () => {
    const deps = ipDeps();
    const user = await createUser(deps, { passwordHash: hash });
    const s = await signIn(deps, { userId: user.id });
    const app = createTestApps(deps).external;
    const flood = Array.from({ length: 40 }, () =>
      app.request('/api/v1/auth/change-password', jsonRequest('POST', { current_password: 'wrong password', new_password: 'a new secret' }, { ...s.headers, 'x-real-ip': '10.200.0.1' })),
    );
    const other = await createUser(deps, { passwordHash: hash });
    const login = app.request('/api/v1/auth/login', jsonRequest('POST', { username: other.username, password: PASSWORD }, { ...PANEL, 'x-real-ip': address() }));
    const answers = await Promise.all(flood);
    const statuses = answers.map((a) => a.status);
    // Never more hashes than the account's burst; the rest are refused before any hashing.
    expect(statuses.filter((x) => x === 401).length).toBeLessThanOrEqual(HASH_LIMITS.account.burst);
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(40 - HASH_LIMITS.account.burst);
    expect(statuses.every((x) => x === 401 || x === 429)).toBe(true);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await errorOf(refused)).code).toBe('rate_limited');
    }
    const signedIn = await login;
    expect([200, 429]).toContain(signedIn.status);
    if (signedIn.status === 429) expect(signedIn.headers.get('retry-after')).toBe('1');
  });

  it('limits password attempts per account across many addresses', { timeout: 120_000 }, async () => {
    const deps = ipDeps();
    const user = await createUser(deps, { passwordHash: hash });
    const app = createTestApps(deps).external;
    const statuses: number[] = [];
    for (let i = 0; i < HASH_LIMITS.account.burst + 3; i++) {
      const res = await app.request('/api/v1/auth/login', jsonRequest('POST', { username: user.username, password: 'wrong' }, { ...PANEL, 'x-real-ip': address() }));
      statuses.push(res.status);
    }
    expect(statuses.slice(0, HASH_LIMITS.account.burst).every((x) => x === 401)).toBe(true);
    expect(statuses.slice(HASH_LIMITS.account.burst)).toEqual([429, 429, 429]);
  });

  it('shares one bucket per address across every public door', async () => {
    const deps = ipDeps();
    const app = createTestApps(deps).external;
    const ip = { ...PANEL, 'x-real-ip': address() };
    for (let i = 0; i < 20; i++) {
      const res = await app.request('/api/v1/auth/options', jsonRequest('POST', { email: `o-${i}@example.com` }, ip));
      expect(res.status).toBe(200);
    }
    for (const [path, body] of [
      ['/api/v1/auth/login', { username: 'someone', password: 'x' }],
      ['/api/v1/auth/email/start', { email: 'x@example.com' }],
      ['/api/v1/auth/setup/redeem', { token: 'x'.repeat(20) }],
    ] as const) {
      const res = await app.request(path, jsonRequest('POST', body, ip));
      expect(res.status, path).toBe(429);
      expect((await errorOf(res)).code).toBe('rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('believes CLIENT_IP_HEADER only from TRUSTED_PROXIES: a direct client is its own bucket whatever header it sends (issue 43 item 12)', async () => {
    const edge = address();
    const deps = createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip', TRUSTED_PROXIES: `${edge},2001:db8:e::/48` } });
    const app = createTestApps(deps).external;
    // Through the edge: each visitor's header is its bucket, so 25 visitors are 25 buckets.
    for (let i = 0; i < 25; i++) {
      const res = await app.request('/api/v1/auth/options', jsonRequest('POST', { email: `t-${i}@example.com` }, { ...PANEL, 'x-real-ip': address() }), peer(edge));
      expect(res.status, `visitor ${i} through the edge`).toBe(200);
    }
    // Straight to the service, a client naming a new address in each request: one bucket, its own.
    const direct = address();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await app.request('/api/v1/auth/options', jsonRequest('POST', { email: `d-${i}@example.com` }, { ...PANEL, 'x-real-ip': address() }), peer(`::ffff:${direct}`));
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);
    // An edge named by its network (IPv6) is believed too.
    const v6 = await app.request('/api/v1/auth/options', jsonRequest('POST', { email: 'v6@example.com' }, { ...PANEL, 'x-real-ip': direct }), peer('2001:db8:e::7'));
    expect(v6.status).toBe(429);
  });

  it('two replicas on one database share the sign-in limit of an address: 24 wrong logins alternating between them, the 21st is refused (issue 43 item 13)', { timeout: 120_000 }, async () => {
    const a = ipDeps();
    const b = createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip' }, overrides: { clock: a.clock } });
    // Each replica has its own process: its own hashing gate, its own app; only the database is shared.
    expect(b.hashGate).not.toBe(a.hashGate);
    const apps = [createTestApps(a).external, createTestApps(b).external];
    const ip = address();
    const login = (i: number) => apps[i % 2]!.request('/api/v1/auth/login', jsonRequest('POST', { username: `nobody-${i}-${ip}`, password: 'wrong' }, { ...PANEL, 'x-real-ip': ip }));
    const statuses: number[] = [];
    for (let i = 0; i < 24; i++) statuses.push((await login(i)).status);
    expect(statuses).toEqual([...Array(20).fill(401), ...Array(4).fill(429)]);
  });

  it('keeps one bucket for one address however the header spells it (leading zeros, integer, IPv4-mapped)', async () => {
    const deps = ipDeps();
    const app = createTestApps(deps).external;
    const forms = ['10.61.0.1', '171769857', '[::ffff:10.61.0.1]', '10.61.0.1:443'];
    for (let i = 0; i < 20; i++) {
      const res = await app.request('/api/v1/auth/options', jsonRequest('POST', { email: `z-${i}@example.com` }, { ...PANEL, 'x-real-ip': forms[i % forms.length]! }));
      expect(res.status).toBe(200);
    }
    for (const form of ['010.061.000.001', '10.061.0.01']) {
      const res = await app.request('/api/v1/auth/login', jsonRequest('POST', { username: 'someone', password: 'x' }, { ...PANEL, 'x-real-ip': form }));
      expect(res.status, form).toBe(429);
    }
  });

  it('falls back to the TCP peer for an unparseable visitor header, so such visitors do not share one bucket', async () => {
    const deps = ipDeps();
    const app = createTestApps(deps).external;
    const ask = (garbage: string, from: string) =>
      app.request('/api/v1/auth/options', jsonRequest('POST', { email: 'g@example.com' }, { ...PANEL, 'x-real-ip': garbage }), peer(from));
    const a = `192.0.2.${Math.floor(Math.random() * 250)}`;
    for (let i = 0; i < 20; i++) expect((await ask(`garbage-${i}`, a)).status).toBe(200);
    // The garbage changes each time, yet the peer's bucket is spent...
    expect((await ask('garbage-x', a)).status).toBe(429);
    // ...and another peer sending garbage has its own.
    expect((await ask('garbage-x', `198.51.100.${Math.floor(Math.random() * 250)}`)).status).toBe(200);
    // The session records the peer, not the garbage.
    const user = await createUser(deps, { passwordHash: hash });
    const res = await app.request('/api/v1/auth/login', jsonRequest('POST', { username: user.username, password: PASSWORD }, { ...PANEL, 'x-real-ip': 'not-an-address' }), peer('203.0.113.77'));
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const list = (await (await app.request('/api/v1/account/sessions', { headers: { ...PANEL, Cookie: cookie } })).json()) as { sessions: Array<{ client_ip: string }> };
    expect(list.sessions[0]!.client_ip).toBe('203.0.113.77');
  });

  it('answers a locked code and a locked e-mail door with 429 too_many_attempts and Retry-After', async () => {
    const deps = createTestDeps(database(), { env: { MAIL_TRANSPORT: 'log' } });
    const user = await createUser(deps);
    const s = await signIn(deps, { userId: user.id });
    const app = createTestApps(deps).external;
    const email = `l-${randomUUID()}@example.com`;
    expect((await app.request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers))).status).toBe(202);
    let last: Response | undefined;
    for (let i = 0; i < 6; i++) last = await app.request('/api/v1/account/email/verify', jsonRequest('POST', { code: '000000' }, s.headers));
    expect(last!.status).toBe(429);
    expect((await errorOf(last!)).code).toBe('too_many_attempts');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Ten wrong codes in a day lock the door: Retry-After runs to when the oldest of them ages out.
    for (let round = 0; round < 2; round++) {
      deps.clock.advance(61_000);
      await app.request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
      for (let i = 0; i < 5; i++) await app.request('/api/v1/account/email/verify', jsonRequest('POST', { code: '000000' }, s.headers));
    }
    deps.clock.advance(61_000);
    const locked = await app.request('/api/v1/account/email/start', jsonRequest('POST', { email }, s.headers));
    expect(locked.status).toBe(429);
    expect((await errorOf(locked)).code).toBe('too_many_attempts');
    const retry = Number(locked.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(23 * 3600);
    expect(retry).toBeLessThanOrEqual(24 * 3600);
  });
});

describe('the e-mail door answers known and unknown addresses in the same time', () => {
  const database = useTestDatabase();

  it('keeps the medians of both within a small margin over many tries, with a relay that takes its time', { timeout: 180_000 }, async () => {
    const ANSWER_MS = 250;
    const sent: string[] = [];
    // A relay that takes 60 ms a message: the time a known address would otherwise betray.
    const mail: MailAdapter = {
      kind: 'smtp',
      send: async (m) => {
        await new Promise((r) => setTimeout(r, 60));
        sent.push(m.to);
      },
      close: async () => {},
    };
    const deps = createTestDeps(database(), { env: { CLIENT_IP_HEADER: 'x-real-ip', EMAIL_DOOR_ANSWER_MS: String(ANSWER_MS) }, overrides: { mail } });
    const app = createTestApps(deps).external;
    const known: number[] = [];
    const unknown: number[] = [];
    const time = async (email: string) => {
      const started = performance.now();
      const res = await app.request('/api/v1/auth/email/start', jsonRequest('POST', { email }, { ...PANEL, 'x-real-ip': `10.77.${Math.floor(Math.random() * 255)}.${Math.floor(Math.random() * 255)}` }));
      expect(res.status).toBe(202);
      await res.arrayBuffer();
      return performance.now() - started;
    };
    for (let i = 0; i < 15; i++) {
      const email = `k-${randomUUID()}@example.com`;
      await createUser(deps, { email });
      // Interleaved, so that the machine's load meets both alike.
      known.push(await time(email));
      unknown.push(await time(`u-${randomUUID()}@example.com`));
    }
    expect(sent).toHaveLength(15);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Both answer at the fixed time, not before it.
    expect(median(known)).toBeGreaterThanOrEqual(ANSWER_MS - 5);
    expect(median(unknown)).toBeGreaterThanOrEqual(ANSWER_MS - 5);
    // The relay's 60 ms do not show: the medians differ by far less than that.
    expect(Math.abs(median(known) - median(unknown))).toBeLessThan(30);
  });
});
