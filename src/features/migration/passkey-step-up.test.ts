import { beforeAll, describe, expect, it } from 'vitest';
import { type PasskeyBrowser } from '../../../test/browser/browser.js';
import { usePasskeyService } from '../../../test/browser/passkey-service.js';
import { PANEL_SCRIPT } from '../../../test/browser/panel-script.js';
import { TOKENS } from '../../../test/helpers/app.js';
import { randomMcUuid } from '../../../test/helpers/servers.js';
import { createUser, linkAccount, signIn } from '../../../test/helpers/sessions.js';
import type { RunningService } from '../../service.js';

interface Answer {
  status: number;
  body: Record<string, unknown> | null;
}

/** The original panel's migrate confirm: begin, the authenticator signs, finish. */
const CONFIRM_WITH_PASSKEY = String.raw`(async () => {
  const begin = await window.panel.api('POST', '/account/migrate/confirm/passkey/begin');
  if (begin.status !== 200) return begin;
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(begin.body.publicKey);
  const j = (await navigator.credentials.get({ publicKey })).toJSON();
  const assertion = {
    id: j.id,
    rawId: j.rawId,
    type: j.type,
    response: {
      clientDataJSON: j.response.clientDataJSON,
      authenticatorData: j.response.authenticatorData,
      signature: j.response.signature,
      userHandle: j.response.userHandle ?? null,
    },
  };
  return window.panel.api('POST', '/account/migrate/confirm/passkey/finish', { assertion });
})()`;

/** A migration confirmed with a real passkey: Chromium's virtual authenticator signs the step-up. */
describe('migration step-up with a passkey in a real browser', { timeout: 180_000 }, () => {
  let service: RunningService;
  let browser: PasskeyBrowser;
  let origin: string;

  const panel = (method: string, path: string, body?: unknown) =>
    browser.page.evaluate(
      ([m, p, b]) => (window as unknown as { panel: { api(m: string, p: string, b?: unknown): Promise<Answer> } }).panel.api(m as string, p as string, b),
      [method, path, body] as [string, string, unknown],
    );

  const started = usePasskeyService();
  beforeAll(() => {
    ({ service, browser, origin } = started());
  });

  it('registers a passkey, starts the migration in game, confirms it with the passkey and names the target', async () => {
    const { deps } = service;
    const source = await createUser(deps, { email: `mig-pk-${Date.now().toString(36)}@example.com` });
    const target = await createUser(deps);
    const mcUuid = randomMcUuid();
    await linkAccount(deps, { userId: source.id, mcUuid });
    const session = await signIn(deps, { userId: source.id, host: 'localhost', method: 'bind' });
    await browser.context.addCookies([
      { name: 'svc_session', value: session.cookie.split('=')[1]!, domain: 'localhost', path: '/', httpOnly: true, secure: true, sameSite: 'Lax' },
    ]);
    await browser.page.goto(`${origin}/healthz`);
    await browser.page.evaluate(PANEL_SCRIPT);
    const registered = (await browser.page.evaluate('window.panel.register("Laptop")')) as Answer;
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);

    const started = await fetch(`http://127.0.0.1:${service.internal.port}/api/v1/internal/account/migrate/start`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.proxy}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ mc_uuid: mcUuid }),
    });
    expect(started.status).toBe(201);

    const byMail = await panel('POST', '/account/migrate/confirm/otp/start');
    expect([byMail.status, (byMail.body as { error: { code: string } }).error.code]).toEqual([409, 'passkey_required']);
    const confirmed = (await browser.page.evaluate(CONFIRM_WITH_PASSKEY)) as Answer;
    expect(confirmed, JSON.stringify(confirmed.body)).toEqual({ status: 200, body: { confirmed: true } });
    expect((await panel('GET', '/account/migrate')).body).toMatchObject({ active: true, state: 'confirmed', confirm_factor: 'passkey' });
    const issued = await panel('POST', '/account/migrate/issue-code', { target_user_id: target.id });
    expect(issued.status).toBe(201);
    expect((await panel('GET', '/account/migrate')).body).toMatchObject({ state: 'code_issued', target_user_id: target.id });
  });
});
