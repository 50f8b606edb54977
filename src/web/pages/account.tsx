import type { Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { noticeOf, type Web } from '../index.js';
import { ActionButton, Field, RecordTable, show } from '../layout.js';

export function accountPages(app: Hono<AppEnv>, web: Web): void {
  app.get('/account', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const [passkeys, sessions] = await Promise.all([
      web.api<{ credentials: Array<Record<string, unknown>> }>(c, 'GET', '/api/v1/account/passkey/credentials'),
      web.api<{ sessions: Array<Record<string, unknown>> }>(c, 'GET', '/api/v1/account/sessions'),
    ]);
    return web.render(
      c,
      { title: 'Your account', viewer, notice: noticeOf(c), scripts: ['webauthn.js', 'passkey.js'] },
      <>
        <section aria-labelledby="email-heading">
          <h2 id="email-heading">E-mail address</h2>
          <p>{viewer.email ? `${viewer.email}` : 'No address yet.'}</p>
          <form method="post" action="/account/email">
            <input type="hidden" name="step" value="start" />
            <Field name="email" label="Address to verify" type="email" autocomplete="email" required />
            <button type="submit" class="secondary">Send a code</button>
          </form>
          <form method="post" action="/account/email">
            <input type="hidden" name="step" value="verify" />
            <Field name="code" label="The code from the e-mail" inputmode="numeric" autocomplete="one-time-code" required />
            <button type="submit" class="secondary">Verify</button>
          </form>
        </section>
        <section aria-labelledby="passkeys-heading">
          <h2 id="passkeys-heading">Passkeys</h2>
          <RecordTable caption="Passkeys" rows={passkeys.ok ? passkeys.body.credentials : []} columns={['name', 'created_at', 'aaguid']} />
          <form id="passkey-add">
            <Field name="name" label="Name for a new passkey" value="This device" />
            <button type="submit">Add a passkey</button>
          </form>
          <p id="passkey-status" hidden role="status" />
        </section>
        <section aria-labelledby="sessions-heading">
          <h2 id="sessions-heading">Sessions</h2>
          <RecordTable caption="Sessions" rows={sessions.ok ? sessions.body.sessions : []} columns={['created_at', 'last_seen_at', 'user_agent', 'current']} />
          <ActionButton action="/account/do/revoke-others" label="Sign out everywhere else" secondary />
        </section>
        <section aria-labelledby="link-heading">
          <h2 id="link-heading">Game identities</h2>
          <p>Link your Minecraft account: get a code here, then type it in the game's lobby.</p>
          <ActionButton action="/account/do/link-start" label="Get a link code" secondary />
          <form method="post" action="/account/do/link-verify">
            <Field name="code" label="A code the game gave you" autocomplete="off" required />
            <button type="submit" class="secondary">Link</button>
          </form>
        </section>
      </>,
    );
  });

  app.post('/account/email', async (c) => {
    const form = await web.form(c);
    const verify = form.step === 'verify';
    const answer = verify
      ? await web.api(c, 'POST', '/api/v1/account/email/verify', { code: (form.code ?? '').trim() })
      : await web.api(c, 'POST', '/api/v1/account/email/start', { email: (form.email ?? '').trim() });
    if (answer.ok) return web.back(c, '/account', { done: verify ? 'Address verified.' : `A code is on its way to ${form.email}.` });
    return web.back(c, '/account', { error: answer.error?.message ?? 'Refused.' });
  });

  const actions: Record<string, (f: Record<string, string>) => { path: string; body?: unknown; done: (b: Record<string, unknown>) => string }> = {
    'revoke-others': () => ({ path: '/api/v1/account/sessions/revoke-others', done: () => 'Signed out everywhere else.' }),
    'link-start': () => ({ path: '/api/v1/account/link/start', done: (b) => show(b.instructions ?? 'Follow the instructions in the game.') }),
    'link-verify': (f) => ({ path: '/api/v1/account/link/verify', body: { code: (f.code ?? '').trim() }, done: () => 'Linked.' }),
  };
  app.post('/account/do/:what', async (c) => {
    const make = actions[c.req.param('what')];
    if (!make) return c.notFound();
    const call = make(await web.form(c));
    const answer = await web.api(c, 'POST', call.path, call.body);
    return web.back(c, '/account', answer.ok ? { done: call.done(answer.body) } : { error: answer.error?.message ?? 'Refused.' });
  });
}
