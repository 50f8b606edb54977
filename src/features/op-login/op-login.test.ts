import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { bearer, createTestApps, createTestDeps, errorOf, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { useTestSmtp } from '../../../test/helpers/smtp.js';
import { describeBadBodies } from '../../../test/helpers/tiers.js';
import { expectTierMatrix } from '../../../test/helpers/tier-matrix.js';
import { sessions } from '../../db/schema/accounts.js';
import { auditLog } from '../../db/schema/audit.js';
import { opLoginRequests } from '../../db/schema/op-login.js';
import { sha256Hex } from '../../lib/secrets.js';

let visitorIp = 0;
/** The operator console as a browser sends it, each request from an address of its own: the door limits are tested elsewhere. */
const fromConsole = () => ({ Host: 'console.felis.test', 'User-Agent': 'Firefox/140.0', 'x-test-ip': `198.51.100.${(visitorIp++ % 250) + 1}` });
const VISITOR_HEADER = { CLIENT_IP_HEADER: 'x-test-ip' };
let mailbox = 0;
const address = () => `op${++mailbox}-${Date.now().toString(36)}@example.com`;

describe('operator login', () => {
  const database = useTestDatabase();
  const testSmtp = useTestSmtp();

  const setup = () => {
    const deps = createTestDeps(database(), { env: VISITOR_HEADER, overrides: { mail: testSmtp().adapter() } });
    return { deps, ...createTestApps(deps) };
  };

  /** A linked admin who approves in game. */
  async function approver(deps: TestDeps, role: 'admin' | 'owner' = 'admin') {
    const user = await createUser(deps, { role });
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: user.id, mcUuid });
    return { ...user, mcUuid };
  }

  async function staffStart(deps: TestDeps, username = `op_${mailbox}_${Date.now().toString(36)}`) {
    const email = address();
    const user = await createUser(deps, { role: 'admin', email, emailVerified: true, username });
    const res = await createTestApps(deps).external.request('/api/v1/auth/op-login/start', jsonRequest('POST', { email: email.toUpperCase() }, fromConsole()));
    expect(res.status).toBe(202);
    const body = (await res.json()) as { request_id: string; expires_at: string };
    return { user, email, username, id: body.request_id, expiresAt: body.expires_at, code: testSmtp().lastCode(email)! };
  }

  it('start answers the same shape for every address; only staff get a request and a mailed code', async () => {
    const { deps, external } = setup();
    const player = address();
    await createUser(deps, { email: player, emailVerified: true });
    const sentBefore = testSmtp().received.length;
    for (const email of [player, address()]) {
      const res = await external.request('/api/v1/auth/op-login/start', jsonRequest('POST', { email }, fromConsole()));
      expect(res.status).toBe(202);
      const body = (await res.json()) as { request_id: string; expires_at: string };
      expect(body.request_id).toMatch(/^[0-9a-f]{32}$/);
      expect(body.expires_at).toBe(new Date(deps.clock.now().getTime() + 600_000).toISOString());
      const [row] = await deps.database.db.select().from(opLoginRequests).where(eq(opLoginRequests.id, body.request_id));
      expect(row).toBeUndefined();
    }
    expect(testSmtp().received.length).toBe(sentBefore);

    const staff = await staffStart(deps);
    expect(staff.id).toMatch(/^[0-9a-f]{32}$/);
    expect(staff.code).toMatch(/^\d{6}$/);
    const [row] = await deps.database.db.select().from(opLoginRequests).where(eq(opLoginRequests.id, staff.id));
    expect(row).toMatchObject({ status: 'pending', userAgent: 'Firefox/140.0', email: staff.email });
    expect(row!.codeHash).not.toContain(staff.code);
  });

  it('start answers 503 mail_unavailable for every address without a relay, 403 when local sign-in is off', async () => {
    const noMail = createTestDeps(database(), { env: VISITOR_HEADER });
    const res = await createTestApps(noMail).external.request('/api/v1/auth/op-login/start', jsonRequest('POST', { email: address() }, fromConsole()));
    expect(res.status).toBe(503);
    expect((await errorOf(res)).code).toBe('mail_unavailable');
    const off = createTestDeps(database(), { env: { ...VISITOR_HEADER, LOCAL_AUTH: 'off' }, overrides: { mail: testSmtp().adapter() } });
    const refused = await createTestApps(off).external.request('/api/v1/auth/op-login/start', jsonRequest('POST', { email: address() }, fromConsole()));
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).code).toBe('local_auth_disabled');
  });

  it('pending lists live pending requests oldest first with the account name', async () => {
    const { deps, internal } = setup();
    const first = await staffStart(deps);
    deps.clock.advance(1_000);
    const second = await staffStart(deps);
    const res = await internal.request('/api/v1/internal/op-login/pending', { headers: bearer('proxy') });
    expect(res.status).toBe(200);
    const { pending } = (await res.json()) as { pending: Array<Record<string, string>> };
    const ours = pending.filter((p) => p.request_id === first.id || p.request_id === second.id);
    expect(ours.map((p) => p.request_id)).toEqual([first.id, second.id]);
    expect(ours[0]).toEqual({ request_id: first.id, username: first.username, email: first.email, client_ip: expect.any(String), created_at: expect.any(String) });
    deps.clock.advance(10 * 60_000);
    const later = (await (await internal.request('/api/v1/internal/op-login/pending', { headers: bearer('proxy') })).json()) as { pending: unknown[] };
    expect(later.pending).toEqual([]);
  });

  it('show and approve need a linked admin or owner (403 not_admin before anything is read), 404 for no live request', async () => {
    const { deps, internal } = setup();
    const req = await staffStart(deps);
    const player = await createUser(deps);
    const playerUuid = randomMcUuid();
    await linkAccount(deps, { userId: player.id, mcUuid: playerUuid });
    const disabledAdmin = await createUser(deps, { role: 'admin', disabled: true });
    const disabledUuid = randomMcUuid();
    await linkAccount(deps, { userId: disabledAdmin.id, mcUuid: disabledUuid });
    for (const uuid of [playerUuid, randomMcUuid(), disabledUuid]) {
      for (const id of [req.id, 'ffffffffffffffffffffffffffffffff']) {
        const show = await internal.request(`/api/v1/internal/op-login/${id}?approver_uuid=${uuid}`, { headers: bearer('proxy') });
        expect(show.status).toBe(403);
        expect((await errorOf(show)).code).toBe('not_admin');
        const approve = await internal.request(`/api/v1/internal/op-login/${id}/approve`, jsonRequest('POST', { approver_uuid: uuid, username: req.username }, bearer('proxy')));
        expect(approve.status).toBe(403);
        expect((await errorOf(approve)).code).toBe('not_admin');
      }
    }
    const admin = await approver(deps, 'owner');
    const missing = await internal.request(`/api/v1/internal/op-login/ffffffffffffffffffffffffffffffff?approver_uuid=${admin.mcUuid}`, { headers: bearer('proxy') });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe('op_login_not_found');
    const show = await internal.request(`/api/v1/internal/op-login/${req.id}?approver_uuid=${admin.mcUuid}`, { headers: bearer('proxy') });
    expect(show.status).toBe(200);
    expect(await show.json()).toEqual({
      request_id: req.id,
      username: req.username,
      email: req.email,
      client_ip: expect.any(String),
      user_agent: 'Firefox/140.0',
      created_at: deps.clock.now().toISOString(),
      expires_at: req.expiresAt,
    });
    const noApprover = await internal.request(`/api/v1/internal/op-login/${req.id}`, { headers: bearer('proxy') });
    expect(noApprover.status).toBe(400);
  });

  it('a wrong name is 409 op_login_mismatch, audited, request still pending; the right name in any case approves once', async () => {
    const { deps, internal, external } = setup();
    const req = await staffStart(deps, `Op_Mixed_${Date.now().toString(36)}`);
    const admin = await approver(deps);
    const approve = (username: string) =>
      internal.request(`/api/v1/internal/op-login/${req.id}/approve`, jsonRequest('POST', { approver_uuid: admin.mcUuid, username }, bearer('proxy')));
    const status = async () => ((await (await external.request(`/api/v1/auth/op-login/status/${req.id}`, { headers: fromConsole() })).json()) as { approved: boolean }).approved;

    const wrong = await approve('alice');
    expect(wrong.status).toBe(409);
    expect((await errorOf(wrong)).code).toBe('op_login_mismatch');
    const [audit] = await deps.database.db.select().from(auditLog).where(eq(auditLog.action, 'auth.op_login.mismatch'));
    expect(audit).toMatchObject({ actor: admin.id, target: req.id, detail: expect.objectContaining({ typed_username: 'alice' }) });
    expect(await status()).toBe(false);

    const right = await approve(req.username.toUpperCase());
    expect(right.status).toBe(200);
    expect(await right.json()).toEqual({ approved: true, username: req.username, email: req.email });
    expect(await status()).toBe(true);
    const twice = await approve(req.username);
    expect(twice.status).toBe(404);
    expect((await errorOf(twice)).code).toBe('op_login_not_found');
  });

  it('finish: console host only, needs the approval and the code, five tries, spends the request once', async () => {
    const { deps, internal, external } = setup();
    const req = await staffStart(deps);
    const finish = (code: string, headers: Record<string, string> = fromConsole()) =>
      external.request('/api/v1/auth/op-login/finish', jsonRequest('POST', { request_id: req.id, code }, headers));

    const early = await finish(req.code);
    expect(early.status).toBe(400);
    expect((await errorOf(early)).code).toBe('op_login_invalid');

    // Self-approval: the staff member's own linked in-game identity.
    const selfUuid = randomMcUuid();
    await linkAccount(deps, { userId: req.user.id, mcUuid: selfUuid });
    const approved = await internal.request(`/api/v1/internal/op-login/${req.id}/approve`, jsonRequest('POST', { approver_uuid: selfUuid, username: req.username }, bearer('proxy')));
    expect(approved.status).toBe(200);

    const onPanel = await finish(req.code, { Host: 'panel.felis.test' });
    expect(onPanel.status).toBe(403);
    expect((await errorOf(onPanel)).code).toBe('forbidden');
    const wrongCode = req.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 2; i++) expect((await errorOf(await finish(wrongCode))).code).toBe('op_login_invalid');

    const ok = await finish(req.code);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ user_id: req.user.id, role: 'admin' });
    const token = ok.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!;
    const [session] = await deps.database.db.select().from(sessions).where(eq(sessions.tokenHash, sha256Hex(token)));
    expect(session).toMatchObject({ method: 'operator_login', host: 'console.felis.test', userId: req.user.id });
    const fleet = await external.request('/api/v1/fleet', { headers: { ...fromConsole(), Cookie: `svc_session=${token}` } });
    expect(fleet.status).toBe(200);

    expect((await errorOf(await finish(req.code))).code).toBe('op_login_invalid');
    expect(((await (await external.request(`/api/v1/auth/op-login/status/${req.id}`, { headers: fromConsole() })).json()) as { approved: boolean }).approved).toBe(false);
  });

  it('locks a request after five wrong codes, and of concurrent finishes exactly one signs in', async () => {
    const { deps, internal, external } = setup();
    const admin = await approver(deps);
    const approve = async (r: { id: string; username: string }) =>
      expect((await internal.request(`/api/v1/internal/op-login/${r.id}/approve`, jsonRequest('POST', { approver_uuid: admin.mcUuid, username: r.username }, bearer('proxy')))).status).toBe(200);
    const finish = (id: string, code: string) =>
      external.request('/api/v1/auth/op-login/finish', jsonRequest('POST', { request_id: id, code }, fromConsole()));

    const locked = await staffStart(deps);
    await approve(locked);
    const wrong = locked.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await finish(locked.id, wrong)).status).toBe(400);
    expect((await finish(locked.id, locked.code)).status).toBe(400);

    deps.clock.advance(61_000);
    const raced = await staffStart(deps);
    await approve(raced);
    const answers = await Promise.all(Array.from({ length: 10 }, () => finish(raced.id, raced.code)));
    expect(answers.map((r) => r.status).filter((s) => s === 200)).toHaveLength(1);
    expect(answers.every((r) => r.status === 200 || r.status === 400)).toBe(true);
  });

  it('status reads false for unknown ids, and the request lapses after 10 minutes', async () => {
    const { deps, internal, external } = setup();
    const req = await staffStart(deps);
    const admin = await approver(deps);
    for (const id of ['nope', 'ffffffffffffffffffffffffffffffff']) {
      const res = await external.request(`/api/v1/auth/op-login/status/${id}`, { headers: fromConsole() });
      expect(await res.json()).toEqual({ approved: false });
    }
    deps.clock.advance(10 * 60_000);
    const late = await internal.request(`/api/v1/internal/op-login/${req.id}/approve`, jsonRequest('POST', { approver_uuid: admin.mcUuid, username: req.username }, bearer('proxy')));
    expect(late.status).toBe(404);
  });

  it('refuses ids and names a database cannot hold (NUL, control characters) with 400, never 500', async () => {
    const { deps, internal, external } = setup();
    const admin = await approver(deps);
    const req = await staffStart(deps);
    expect((await external.request('/api/v1/auth/op-login/status/%00', { headers: fromConsole() })).status).toBe(400);
    expect((await external.request('/api/v1/auth/op-login/finish', jsonRequest('POST', { request_id: 'a\u0000b', code: '123456' }, fromConsole()))).status).toBe(400);
    for (const username of ['o\u0000p', 'op\n', '\ud800']) {
      const res = await internal.request(`/api/v1/internal/op-login/${req.id}/approve`, jsonRequest('POST', { approver_uuid: admin.mcUuid, username }, bearer('proxy')));
      expect(res.status, JSON.stringify(username)).toBe(400);
    }
    expect((await internal.request(`/api/v1/internal/op-login/%00?approver_uuid=${admin.mcUuid}`, { headers: bearer('proxy') })).status).toBe(400);
  });

  it('serves the internal routes to the proxy only', async () => {
    const { internal } = setup();
    const access = { tier: 'service', callers: ['proxy'] } as const;
    await expectTierMatrix(internal, [
      { method: 'GET', path: '/api/v1/internal/op-login/pending', access },
      { method: 'GET', path: `/api/v1/internal/op-login/abc?approver_uuid=${randomMcUuid()}`, access },
      { method: 'POST', path: '/api/v1/internal/op-login/abc/approve', access },
    ]);
  });

  describeBadBodies(database, [
    { method: 'POST', path: '/api/v1/auth/op-login/start' },
    { method: 'POST', path: '/api/v1/auth/op-login/finish' },
  ]);
});
