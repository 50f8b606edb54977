import type { Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import type { Web } from '../index.js';
import { Field } from '../layout.js';

/** Only a path of this site: a sign-in never sends the visitor elsewhere. */
function safeNext(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

function EmailForm(props: { email?: string; error?: string; next: string }) {
  return (
    <form method="post" action="/sign-in">
      <input type="hidden" name="step" value="start" />
      <input type="hidden" name="next" value={props.next} />
      <Field name="email" label="E-mail address" type="email" autocomplete="email" value={props.email} error={props.error} required />
      <button type="submit">Send me a code</button>
    </form>
  );
}

function CodeForm(props: { email: string; error?: string; next: string }) {
  return (
    <form method="post" action="/sign-in">
      <input type="hidden" name="step" value="verify" />
      <input type="hidden" name="next" value={props.next} />
      <input type="hidden" name="email" value={props.email} />
      <Field name="code" label={`The code sent to ${props.email}`} inputmode="numeric" autocomplete="one-time-code" error={props.error} required />
      <button type="submit">Sign in</button>
    </form>
  );
}

function PasskeySignIn() {
  return (
    <section aria-labelledby="passkey-heading">
      <h2 id="passkey-heading">With a passkey</h2>
      <button type="button" id="passkey-sign-in" class="secondary">Sign in with a passkey</button>
      <p id="passkey-status" hidden role="status" />
    </section>
  );
}

const signInScripts = ['webauthn.js', 'passkey.js'];

export function signInPages(app: Hono<AppEnv>, web: Web): void {
  app.get('/sign-in', (c) => {
    const next = safeNext(c.req.query('next'));
    return web.render(
      c,
      { title: 'Sign in', scripts: signInScripts },
      <>
        <section aria-labelledby="email-heading">
          <h2 id="email-heading">With an e-mailed code</h2>
          <EmailForm next={next} />
        </section>
        <PasskeySignIn />
      </>,
    );
  });

  app.post('/sign-in', async (c) => {
    const form = await web.form(c);
    const next = safeNext(form.next);
    const email = (form.email ?? '').trim();
    if (form.step === 'verify') {
      const answer = await web.api(c, 'POST', '/api/v1/auth/email/verify', { email, code: (form.code ?? '').trim() });
      if (answer.ok) {
        web.passCookies(c, answer);
        return c.redirect(next, 303);
      }
      return web.render(c, { title: 'Sign in' }, <CodeForm email={email} next={next} error={answer.error?.message} />, answer.status);
    }
    const answer = await web.api(c, 'POST', '/api/v1/auth/email/start', { email });
    if (answer.ok) {
      return web.render(c, { title: 'Sign in', notice: { text: `A code is on its way to ${email}.` } }, <CodeForm email={email} next={next} />);
    }
    return web.render(
      c,
      { title: 'Sign in', scripts: signInScripts },
      <>
        <EmailForm email={email} next={next} error={answer.error?.message} />
        <PasskeySignIn />
      </>,
      answer.status,
    );
  });

  const setupForm = (props: { token?: string; error?: string }) => (
    <>
      <p>
        This installation has no owner yet. The service wrote a one-time setup token to its log when it started (the line
        with <code>setup_token</code>); paste it here to become the owner.
      </p>
      <form method="post" action="/setup">
        <Field name="token" label="Setup token" value={props.token} error={props.error} autocomplete="off" required />
        <button type="submit">Become the owner</button>
      </form>
    </>
  );

  app.get('/setup', async (c) => {
    return web.render(c, { title: 'First start' }, setupForm({}));
  });

  app.post('/setup', async (c) => {
    const form = await web.form(c);
    const answer = await web.api(c, 'POST', '/api/v1/auth/setup/redeem', { token: (form.token ?? '').trim() });
    if (!answer.ok) return web.render(c, { title: 'First start' }, setupForm({ token: form.token, error: answer.error?.message }), answer.status);
    web.passCookies(c, answer);
    return web.back(c, '/account', { done: 'You are the owner. Verify an e-mail address or add a passkey to finish setting up.' });
  });

  app.post('/sign-out', async (c) => {
    const answer = await web.api(c, 'POST', '/api/v1/auth/logout');
    web.passCookies(c, answer);
    return c.redirect('/sign-in', 303);
  });
}
