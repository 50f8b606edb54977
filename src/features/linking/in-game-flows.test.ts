import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, TOKENS, type TestDeps } from '../../../test/helpers/app.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { addServer, randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount } from '../../../test/helpers/sessions.js';
import { exchange, type Exchanged } from '../../../test/helpers/real-http.js';
import { startSmtp, type TestSmtp } from '../../../test/helpers/smtp.js';
import { serve, type Listening } from '../../runtime/serve.js';

/** A browser on one site: it keeps the cookies it is given and sends what a browser sends on fetch(). */
class Browser {
  readonly #jar = new Map<string, string>();
  constructor(
    private readonly port: number,
    private readonly host: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<Exchanged> {
    const headers: Record<string, string> = { Host: this.host, 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0', 'Sec-Fetch-Site': 'same-origin' };
    if (method !== 'GET') headers.Origin = `https://${this.host}`;
    if (this.#jar.size > 0) headers.Cookie = [...this.#jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await exchange(this.port, method, path, headers, body);
    for (const line of res.setCookie) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.#jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return res;
  }

  cookie(name: string): string | undefined {
    return this.#jar.get(name);
  }
}

/** The proxy or the lobby: its service token, no Origin, no cookies. */
const service = (port: number, caller: 'proxy' | 'limbo') => (method: string, path: string, body?: unknown) =>
  exchange(port, method, path, { Authorization: `Bearer ${TOKENS[caller]}`, Accept: 'application/json' }, body);

describe('the in-game flows end to end over HTTP', () => {
  const database = useTestDatabase();
  let smtp: TestSmtp;
  let deps: TestDeps;
  let internal: Listening;
  let external: Listening;
  let proxy: ReturnType<typeof service>;
  let limbo: ReturnType<typeof service>;

  beforeAll(async () => {
    smtp = await startSmtp();
    deps = createTestDeps(database(), { overrides: { mail: smtp.adapter() } });
    const apps = createTestApps(deps);
    internal = await serve({ fetch: apps.internal.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    external = await serve({ fetch: apps.external.fetch, port: 0, host: '127.0.0.1', log: deps.log });
    proxy = service(internal.port, 'proxy');
    limbo = service(internal.port, 'limbo');
  });
  afterAll(async () => {
    await internal?.close(100);
    await external?.close(100);
    await smtp?.close();
  });

  /** The lobby's join: the gate's bar check, the link poll, and a code; the player binds on the panel. */
  async function joinAndBind(mcUuid: string, browser: Browser) {
    expect(await limbo('GET', `/api/v1/internal/player/blacklist/${mcUuid}`)).toMatchObject({ status: 200, body: { blacklisted: false } });
    expect(await limbo('GET', `/api/v1/internal/account/link/status/${mcUuid}`)).toMatchObject({ status: 200, body: { linked: false } });
    const minted = await limbo('POST', '/api/v1/internal/account/link/code', { mc_uuid: mcUuid });
    expect(minted).toMatchObject({ status: 201, body: { code: expect.any(String), panel_url: 'https://panel.felis.test/' } });
    const bound = await browser.call('POST', '/api/v1/auth/bind', { code: minted.body.code });
    expect(bound).toMatchObject({ status: 200, body: { linked: true, mc_uuid: mcUuid, auth_source: 'primary' } });
    expect(browser.cookie('svc_session')).toBeTruthy();
    expect(await limbo('GET', `/api/v1/internal/account/link/status/${mcUuid}`)).toMatchObject({ body: { linked: true } });
    return bound.body.user_id as string;
  }

  it('a player joins the lobby, gets a code, binds on the panel, is linked, and claims a server', async () => {
    const mcUuid = randomMcUuid();
    const browser = new Browser(external.port, 'panel.felis.test');
    const userId = await joinAndBind(mcUuid, browser);
    expect(await browser.call('GET', '/api/v1/me')).toMatchObject({ status: 200, body: { user_id: userId, role: 'user' } });

    const name = addServer(deps).spec.name;
    expect(await proxy('POST', `/api/v1/internal/servers/${name}/claim`, { mc_uuid: mcUuid })).toMatchObject({ status: 200, body: { name, claimed: true } });
    const mine = await browser.call('GET', '/api/v1/me/servers');
    expect((mine.body.servers as Array<{ name: string; owned: boolean }>).find((s) => s.name === name)).toMatchObject({ owned: true });
  });

  it('a staff member starts operator login, an admin approves in game with the wrong name then the right one, the browser finishes', async () => {
    const email = `ops-${Date.now().toString(36)}@example.com`;
    const staff = await createUser(deps, { role: 'admin', email, emailVerified: true, username: `Ops_${Date.now().toString(36)}` });
    const admin = await createUser(deps, { role: 'owner' });
    const adminUuid = randomMcUuid();
    await linkAccount(deps, { userId: admin.id, mcUuid: adminUuid });

    const browser = new Browser(external.port, 'console.felis.test');
    const started = await browser.call('POST', '/api/v1/auth/op-login/start', { email });
    expect(started.status).toBe(202);
    const id = started.body.request_id as string;
    const code = smtp.lastCode(email)!;

    const pending = await proxy('GET', '/api/v1/internal/op-login/pending');
    expect((pending.body.pending as Array<{ request_id: string; username: string }>).find((p) => p.request_id === id)).toMatchObject({ username: staff.username, email });
    const shown = await proxy('GET', `/api/v1/internal/op-login/${id}?approver_uuid=${adminUuid}`);
    expect(shown).toMatchObject({ status: 200, body: { request_id: id, username: staff.username, user_agent: expect.stringContaining('Firefox') } });

    const wrong = await proxy('POST', `/api/v1/internal/op-login/${id}/approve`, { approver_uuid: adminUuid, username: 'someone_else' });
    expect(wrong).toMatchObject({ status: 409, body: { error: { code: 'op_login_mismatch' } } });
    expect(await browser.call('GET', `/api/v1/auth/op-login/status/${id}`)).toMatchObject({ status: 200, body: { approved: false } });

    const right = await proxy('POST', `/api/v1/internal/op-login/${id}/approve`, { approver_uuid: adminUuid, username: staff.username.toLowerCase() });
    expect(right).toMatchObject({ status: 200, body: { approved: true, username: staff.username, email } });
    expect(await browser.call('GET', `/api/v1/auth/op-login/status/${id}`)).toMatchObject({ body: { approved: true } });

    const finished = await browser.call('POST', '/api/v1/auth/op-login/finish', { request_id: id, code });
    expect(finished).toMatchObject({ status: 200, body: { user_id: staff.id, role: 'admin' } });
    expect((await browser.call('GET', '/api/v1/fleet')).status).toBe(200);
  });

  it('a migration moves two servers to the target account', async () => {
    const email = `src-${Date.now().toString(36)}@example.com`;
    const source = await createUser(deps, { email, emailVerified: true });
    const sourceUuid = randomMcUuid();
    await linkAccount(deps, { userId: source.id, mcUuid: sourceUuid });
    const sourceBrowser = new Browser(external.port, 'panel.felis.test');
    const minted = await limbo('POST', '/api/v1/internal/account/link/code', { mc_uuid: sourceUuid });
    expect(await sourceBrowser.call('POST', '/api/v1/auth/bind', { code: minted.body.code })).toMatchObject({ status: 200, body: { user_id: source.id } });

    const targetBrowser = new Browser(external.port, 'panel.felis.test');
    const targetId = await joinAndBind(randomMcUuid(), targetBrowser);

    const names = [addServer(deps).spec.name, addServer(deps).spec.name].sort();
    for (const name of names) expect((await proxy('POST', `/api/v1/internal/servers/${name}/claim`, { mc_uuid: sourceUuid })).status).toBe(200);

    expect(await proxy('POST', '/api/v1/internal/account/migrate/start', { mc_uuid: sourceUuid })).toMatchObject({ status: 201, body: { started: true, state: 'initiated' } });
    expect(await sourceBrowser.call('GET', '/api/v1/account/migrate')).toMatchObject({ body: { active: true, state: 'initiated' } });
    expect((await sourceBrowser.call('POST', '/api/v1/account/migrate/confirm/otp/start')).status).toBe(202);
    expect((await sourceBrowser.call('POST', '/api/v1/account/migrate/confirm/otp/verify', { code: smtp.lastCode(email) })).status).toBe(200);
    const issued = await sourceBrowser.call('POST', '/api/v1/account/migrate/issue-code', { target_user_id: targetId });
    expect(issued.status).toBe(201);

    const redeemed = await targetBrowser.call('POST', '/api/v1/account/migrate/redeem', { code: issued.body.code });
    expect(redeemed).toMatchObject({ status: 200, body: { migrated: true, servers_moved: 2, servers: names } });
    const owned = (b: Exchanged) => (b.body.servers as Array<{ name: string; owned: boolean }>).filter((s) => s.owned).map((s) => s.name);
    expect(owned(await targetBrowser.call('GET', '/api/v1/me/servers')).sort()).toEqual(names);
    expect(owned(await sourceBrowser.call('GET', '/api/v1/me/servers'))).toEqual([]);
    expect(await limbo('GET', `/api/v1/internal/account/link/status/${sourceUuid}`)).toMatchObject({ body: { linked: true } });
  });
});
