import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { passkeyCredentials, sessions } from '../../src/db/schema/index.js';
import type { RunningService } from '../../src/service.js';
import { createUser, signIn } from '../helpers/sessions.js';
import { type PasskeyBrowser } from './browser.js';
import { usePasskeyService } from './passkey-service.js';
import { PANEL_SCRIPT } from './panel-script.js';

interface Answer {
  step?: string;
  status: number;
  body: Record<string, unknown> & { error?: { code: string } };
  options?: Record<string, unknown>;
  userHandle?: string | null;
}

type Panel = {
  api(method: string, path: string, body?: unknown): Promise<Answer>;
  register(name: string): Promise<Answer>;
  loginByEmail(email: string): Promise<Answer>;
  loginDiscoverable(): Promise<Answer>;
  reauthWithPasskey(): Promise<Answer>;
};

/**
 * The whole passkey life of an account, driven by a real browser against the running service over
 * a real port: Chromium's WebAuthn with a virtual authenticator signs every ceremony, and the
 * service verifies them with nothing stubbed.
 */
describe('passkeys in a real browser', { timeout: 180_000 }, () => {
  let service: RunningService;
  let browser: PasskeyBrowser;
  let origin: string;
  const email = 'alex@example.com';

  const panel = <K extends keyof Panel>(name: K, ...args: Parameters<Panel[K]>) =>
    browser.page.evaluate(
      ([n, a]) => (window as unknown as { panel: Record<string, (...x: unknown[]) => Promise<Answer>> }).panel[n]!(...a),
      [name, args] as [string, unknown[]],
    );

  const started = usePasskeyService();
  beforeAll(() => {
    ({ service, browser, origin } = started());
  });

  it('registers a passkey, signs in with it by e-mail and discoverably, and gives a reauth proof', async () => {
    const { deps } = service;
    const db = deps.database.db;
    // A player who came in by bind code: the first passkey needs no proof (nothing to guard yet)
    // and ends setup lockdown.
    const user = await createUser(deps, { email, inSetup: true });
    const bound = await signIn(deps, { userId: user.id, host: 'localhost', method: 'bind' });
    await browser.context.addCookies([
      { name: 'svc_session', value: bound.cookie.split('=')[1]!, domain: 'localhost', path: '/', httpOnly: true, secure: true, sameSite: 'Lax' },
    ]);
    await browser.page.goto(`${origin}/healthz`);
    await browser.page.evaluate(PANEL_SCRIPT);

    expect((await panel('api', 'GET', '/me')).body).toMatchObject({ user_id: user.id, setup_required: true });
    const registered = await panel('register', 'Laptop');
    expect(registered.options).toMatchObject({ rp: { id: 'localhost' }, user: { name: email }, authenticatorSelection: { userVerification: 'required' } });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body).toEqual({ id: expect.any(String), name: 'Laptop', created_at: expect.any(String), aaguid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect((await panel('api', 'GET', '/me')).body).toMatchObject({ setup_required: false });
    const listed = await panel('api', 'GET', '/account/passkey/credentials');
    expect(listed.body).toEqual({ credentials: [registered.body] });
    const [stored] = await db.select().from(passkeyCredentials).where(eq(passkeyCredentials.userId, user.id));
    expect(stored).toMatchObject({ transports: ['internal'], deviceType: expect.any(String), backedUp: expect.any(Boolean) });

    // Signed out, the address offers its passkey first, and the passkey signs in by e-mail.
    expect((await panel('api', 'POST', '/auth/logout')).status).toBe(200);
    expect((await panel('api', 'GET', '/me')).status).toBe(401);
    expect((await panel('api', 'POST', '/auth/options', { email })).body).toEqual({ methods: ['passkey'] });
    const byEmail = await panel('loginByEmail', email);
    expect((byEmail.options!.allowCredentials as Array<{ id: string }>).map((c) => c.id)).toEqual([stored!.credentialId]);
    expect(byEmail.status, JSON.stringify(byEmail.body)).toBe(200);
    expect(byEmail.body).toEqual({ user_id: user.id, role: 'user' });
    expect((await panel('api', 'GET', '/me')).body).toMatchObject({ user_id: user.id });
    const afterEmail = (await panel('api', 'GET', '/account/passkey/credentials')).body.credentials as Array<{ last_used_at?: string }>;
    expect(afterEmail[0]!.last_used_at).toEqual(expect.any(String));

    // Discoverably: no address typed, the authenticator offers its resident key.
    await panel('api', 'POST', '/auth/logout');
    const discovered = await panel('loginDiscoverable');
    expect(discovered.options).toMatchObject({ login_id: expect.any(String), publicKey: { allowCredentials: [], rpId: 'localhost' } });
    expect(discovered.userHandle).toEqual(expect.any(String));
    expect(discovered.status, JSON.stringify(discovered.body)).toBe(200);
    expect(discovered.body).toEqual({ user_id: user.id, role: 'user' });
    // A passkey sign-in is itself a fresh proof.
    expect((await panel('api', 'GET', '/account/reauth')).body).toMatchObject({ needed: false, until: expect.any(String), factors: ['passkey'] });

    // Six minutes later the sign-in no longer counts: the change is refused until a proof is given.
    await db.update(sessions).set({ createdAt: sql`${sessions.createdAt} - interval '6 minutes'` }).where(eq(sessions.userId, user.id));
    expect((await panel('api', 'GET', '/account/reauth')).body).toEqual({ needed: true, factors: ['passkey'] });
    const refused = await panel('api', 'DELETE', `/account/passkey/credentials/${stored!.id}`);
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'reauth_required']);
    const proof = await panel('reauthWithPasskey');
    expect(proof.status, JSON.stringify(proof.body)).toBe(200);
    expect(proof.body).toEqual({ ok: true, until: expect.any(String) });
    expect((await panel('api', 'GET', '/account/reauth')).body).toEqual({ needed: false, until: proof.body.until, factors: ['passkey'] });
    expect(await panel('api', 'DELETE', `/account/passkey/credentials/${stored!.id}`)).toEqual({ status: 200, body: { removed: true } });
    expect((await panel('api', 'GET', '/account/passkey/credentials')).body).toEqual({ credentials: [] });
  });
});
