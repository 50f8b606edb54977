import type { Context, Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { ActionTable, PostForm, SecretOnce, refused, stateOf, utcOrNull, type FormState } from '../forms.js';
import { noticeOf, type Web } from '../index.js';
import { ActionButton, Field, RecordTable, show } from '../layout.js';

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  last_used_at?: string;
  expires_at?: string;
}

/** What a key may do, as a person reads its scopes. */
const scopeOf = (scopes: string[]) => (scopes.includes('write') ? 'full (read and change)' : 'read only');

export function accountPages(app: Hono<AppEnv>, web: Web): void {
  /** The account page; `state` is a form the API just refused (shown with its message beside its field). */
  const accountPage = async (c: Context<AppEnv>, state?: FormState) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const [passkeys, sessions, keys] = await Promise.all([
      web.api<{ credentials: Array<Record<string, unknown>> }>(c, 'GET', '/api/v1/account/passkey/credentials'),
      web.api<{ sessions: Array<Record<string, unknown>> }>(c, 'GET', '/api/v1/account/sessions'),
      web.api<{ keys: ApiKey[] }>(c, 'GET', '/api/v1/account/api-keys'),
    ]);
    const key = stateOf(state, 'api-key');
    return web.render(
      c,
      { title: 'Your account', viewer, notice: state ? undefined : noticeOf(c), scripts: ['webauthn.js', 'passkey.js'] },
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
        <section aria-labelledby="keys-heading">
          <h2 id="keys-heading">API keys</h2>
          <p>A key acts as you on the panel's API (<code>Authorization: Bearer felis_…</code>), never on staff pages. Signing out everywhere revokes every key.</p>
          {keys.ok ? (
            <ActionTable
              caption="API keys"
              rows={keys.body.keys}
              empty="No API key yet."
              columns={[
                ['Name', (k) => k.name],
                ['Starts with', (k) => <code>{k.prefix}</code>],
                ['May', (k) => scopeOf(k.scopes)],
                ['Expires', (k) => k.expires_at ?? 'never'],
                ['Last used', (k) => k.last_used_at ?? 'not yet'],
              ]}
              actions={(k) => <ActionButton action="/account/do/revoke-key" fields={{ id: k.id, name: k.name }} label={`Revoke ${k.name}`} secondary />}
            />
          ) : <p class="notice error" role="alert">{keys.error?.message ?? 'The keys cannot be listed now.'}</p>}
          <h3>Make a key</h3>
          <p><small>Asks for a fresh proof of identity: a sign-in within the last 5 minutes.</small></p>
          <PostForm
            action="/account/do/api-key"
            state={key}
            rows={[
              [
                { id: 'key-name', name: 'name', label: 'Name (what it is for)', required: true, placeholder: 'backup script' },
                { kind: 'select', id: 'key-scope', name: 'scope', label: 'It may', options: [['full', 'read and change'], ['read', 'read only']] },
                { id: 'key-expires', name: 'expires_at', label: 'Expires (UTC, optional)', type: 'datetime-local' },
              ],
            ]}
            submit="Make the key"
          />
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
      state?.status ?? 200,
    );
  };
  app.get('/account', (c) => accountPage(c));

  app.post('/account/email', async (c) => {
    const form = await web.form(c);
    const verify = form.step === 'verify';
    const answer = verify
      ? await web.api(c, 'POST', '/api/v1/account/email/verify', { code: (form.code ?? '').trim() })
      : await web.api(c, 'POST', '/api/v1/account/email/start', { email: (form.email ?? '').trim() });
    if (answer.ok) return web.back(c, '/account', { done: verify ? 'Address verified.' : `A code is on its way to ${form.email}.` });
    return web.back(c, '/account', { error: answer.error?.message ?? 'Refused.' });
  });

  /** The account's one-call forms; `fields` are those a refusal may name (shown beside them), else a notice. */
  const actions: Record<string, (f: Record<string, string>) => { method?: string; path: string; body?: unknown; done: (b: Record<string, unknown>) => string; fields?: string[] }> = {
    'revoke-others': () => ({ path: '/api/v1/account/sessions/revoke-others', done: () => 'Signed out everywhere else.' }),
    'link-start': () => ({ path: '/api/v1/account/link/start', done: (b) => show(b.instructions ?? 'Follow the instructions in the game.') }),
    'link-verify': (f) => ({ path: '/api/v1/account/link/verify', body: { code: (f.code ?? '').trim() }, done: () => 'Linked.' }),
    'revoke-key': (f) => ({ method: 'DELETE', path: `/api/v1/account/api-keys/${encodeURIComponent(f.id ?? '')}`, done: () => `Revoked the key ${f.name ?? ''}: its next request is refused.` }),
    'api-key': (f) => {
      const expires = utcOrNull(f.expires_at);
      return {
        path: '/api/v1/account/api-keys',
        body: { name: (f.name ?? '').trim(), scopes: f.scope === 'read' ? ['read'] : ['read', 'write'], ...(expires ? { expires_at: expires } : {}) },
        done: () => 'Key made.',
        fields: ['name', 'expires_at'],
      };
    },
  };
  app.post('/account/do/:what', async (c) => {
    const what = c.req.param('what');
    const make = actions[what];
    if (!make) return c.notFound();
    const form = await web.form(c);
    const call = make(form);
    const answer = await web.api(c, call.method ?? 'POST', call.path, call.body);
    if (answer.ok && what === 'api-key') {
      // The secret is in this answer only: shown on the answer page, never put in an address.
      const viewer = await web.viewer(c);
      if (viewer instanceof Response) return viewer;
      const made = answer.body as unknown as ApiKey & { secret: string };
      return web.render(
        c,
        { title: 'API key made', viewer, scripts: ['copy.js'] },
        <SecretOnce secret={made.secret} what={`The key ${made.name} (${scopeOf(made.scopes)}) is made`} label="Secret" back={{ href: '/account', text: 'Back to your account' }} />,
        201,
      );
    }
    if (answer.ok) return web.back(c, '/account', { done: call.done(answer.body) });
    if (call.fields) return accountPage(c, refused(what, form, answer, call.fields));
    return web.back(c, '/account', { error: answer.error?.message ?? 'Refused.' });
  });
}
