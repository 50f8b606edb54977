import type { Context, Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { noticeOf, type Web } from '../index.js';
import { ActionButton, Field, RecordTable, show } from '../layout.js';

interface ServerRow {
  name: string;
  displayName?: string;
  phase?: string;
  playersOnline: number;
  playersMax: number;
  owned: boolean;
  claimable: boolean;
  desiredState?: string;
}

const SERVER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

function ServerTable(props: { servers: ServerRow[] }) {
  if (props.servers.length === 0) return <p>No servers yet. <a href="/servers#create">Create one</a>.</p>;
  return (
    <table class="striped">
      <thead>
        <tr>
          <th scope="col">Server</th>
          <th scope="col">Phase</th>
          <th scope="col">Players</th>
          <th scope="col">Yours</th>
        </tr>
      </thead>
      <tbody>
        {props.servers.map((s) => (
          <tr data-live-server={s.name}>
            <td><a href={`/servers/${s.name}`}>{s.displayName ?? s.name}</a></td>
            <td><span class="phase" data-phase={s.phase ?? 'Unknown'}>{s.phase ?? 'Unknown'}</span></td>
            <td class="players">{`${s.playersOnline} / ${s.playersMax}`}</td>
            <td>{s.owned ? 'yours' : s.claimable ? 'claimable' : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Which field of the create form an API refusal concerns. */
const CREATE_FIELD: Record<string, string> = { bad_name: 'name', conflict: 'name', image_not_whitelisted: 'image', image_not_in_registry: 'image' };

function CreateForm(props: { values?: Record<string, string>; errors?: Record<string, string> }) {
  const v = props.values ?? {};
  const e = props.errors ?? {};
  return (
    <section id="create" aria-labelledby="create-heading">
      <h2 id="create-heading">Create a server</h2>
      <form method="post" action="/servers">
        <div class="grid">
          <Field name="name" label="Name (lower-case letters, digits, dashes)" value={v.name} error={e.name} required />
          <Field name="subdomain" label="Subdomain" value={v.subdomain} error={e.subdomain} required />
        </div>
        <Field name="display_name" label="Display name (optional)" value={v.display_name} error={e.display_name} />
        {e._ ? <p class="notice error" role="alert">{e._}</p> : null}
        <button type="submit">Create</button>
      </form>
    </section>
  );
}

const TABS = ['overview', 'console', 'players', 'schedules', 'backups', 'files', 'settings'] as const;
type Tab = (typeof TABS)[number];

export function serverPages(app: Hono<AppEnv>, web: Web): void {
  const listPage = async (c: Context<AppEnv>, title: string, form?: { values: Record<string, string>; errors: Record<string, string> }, status = 200) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const mine = await web.api<{ servers: ServerRow[] }>(c, 'GET', '/api/v1/me/servers');
    const servers = mine.ok ? mine.body.servers : [];
    return web.render(
      c,
      { title, viewer, scripts: ['live.js'], notice: noticeOf(c) ?? (mine.ok ? undefined : { text: mine.error?.message ?? 'The servers cannot be listed now.', error: true }) },
      <>
        {title === 'Dashboard' ? (
          <p>
            {`Signed in as ${viewer.username}. `}
            {viewer.setup_required ? <a href="/account">Finish setting up your account first.</a> : 'Pick a server to open its console, or create one below.'}
          </p>
        ) : null}
        <section aria-labelledby="list-heading">
          <h2 id="list-heading">Your servers</h2>
          <ServerTable servers={servers} />
        </section>
        <CreateForm values={form?.values} errors={form?.errors} />
      </>,
      status,
    );
  };
  app.get('/', (c) => listPage(c, 'Dashboard'));
  app.get('/servers', (c) => listPage(c, 'Servers'));

  app.post('/servers', async (c) => {
    const form = await web.form(c);
    const body: Record<string, string> = { name: (form.name ?? '').trim(), subdomain: (form.subdomain ?? '').trim() };
    if (form.display_name?.trim()) body.display_name = form.display_name.trim();
    const answer = await web.api(c, 'POST', '/api/v1/servers', body);
    if (answer.ok) return web.back(c, `/servers/${body.name}`, { done: `${body.name} is created. Wake it to start it.` });
    const code = answer.error?.code ?? '';
    const message = answer.error?.message ?? 'The server was not created.';
    let field = CREATE_FIELD[code];
    if (code === 'bad_request') field = ['name', 'subdomain', 'display_name'].find((f) => message.includes(f));
    if (code === 'conflict' && /subdomain/i.test(message)) field = 'subdomain';
    return listPage(c, 'Servers', { values: form, errors: { [field ?? '_']: message } }, answer.status);
  });

  app.get('/servers/:name', async (c) => {
    const name = c.req.param('name');
    if (!SERVER_NAME.test(name)) return c.notFound();
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const tab: Tab = (TABS as readonly string[]).includes(c.req.query('tab') ?? '') ? (c.req.query('tab') as Tab) : 'overview';
    const status = await web.api<Record<string, unknown> & { phase: string; playersOnline: number; playersMax: number }>(c, 'GET', `/api/v1/servers/${name}/status`);
    if (!status.ok) {
      return web.render(c, { title: name, viewer, notice: { text: status.error?.message ?? 'No such server.', error: true } }, <p><a href="/servers">Back to the servers</a></p>, status.status);
    }
    const s = status.body;
    const base = `/servers/${name}`;
    const content = await tabContent(c, web, name, tab);
    return web.render(
      c,
      { title: show(s.displayName ?? name), viewer, notice: noticeOf(c), scripts: ['live.js', ...(content.scripts ?? [])], styles: content.styles },
      <>
        <p data-live-server={name}>
          {'Phase: '}<span class="phase" data-phase={s.phase} id="server-phase">{s.phase}</span>
          {' · players '}<span class="players">{`${s.playersOnline} / ${s.playersMax}`}</span>
          {` · desired ${show(s.desiredState)}`}
        </p>
        {s.retiring ? <p class="notice error" role="status">{`Retiring since ${show((s.retiring as { requested_at: string }).requested_at)}: it stops, then ${(s.retiring as { delete: boolean }).delete ? 'is deleted' : 'is released'}.`}</p> : null}
        <div class="actions" role="group" aria-label="Power">
          <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="wake" label="Wake" />
          <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="stop" label="Stop" secondary />
          <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="restart" label="Restart" secondary />
          <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="emergency-stop" label="Emergency stop" secondary />
        </div>
        <nav class="tabs" aria-label="Server sections">
          <ul>
            {TABS.map((t) => (
              <li><a href={`${base}?tab=${t}`} aria-current={t === tab ? 'page' : undefined}>{t[0]!.toUpperCase() + t.slice(1)}</a></li>
            ))}
          </ul>
        </nav>
        {content.body}
      </>,
    );
  });

  app.post('/servers/:name/power', async (c) => {
    const name = c.req.param('name');
    if (!SERVER_NAME.test(name)) return c.notFound();
    const form = await web.form(c);
    const base = (TABS as readonly string[]).includes(form.tab ?? '') && form.tab !== 'overview' ? `/servers/${name}?tab=${form.tab}` : `/servers/${name}`;
    const paths: Record<string, { path: string; body?: unknown; done: string }> = {
      wake: { path: 'wake', done: 'Waking up.' },
      stop: { path: 'stop', done: 'Stopping.' },
      restart: { path: 'restart', done: 'Restarting.' },
      'emergency-stop': { path: 'emergency-stop', body: { confirm: name }, done: 'Stopped at once.' },
    };
    const action = paths[form.action ?? ''];
    if (!action) return web.back(c, base, { error: 'Unknown action.' });
    const answer = await web.api(c, 'POST', `/api/v1/servers/${name}/${action.path}`, action.body);
    return web.back(c, base, answer.ok ? { done: action.done } : { error: answer.error?.message ?? 'Refused.' });
  });

  /** The server's small forms: each one API call, then back to its tab with what happened. */
  const actions: Record<string, (name: string, f: Record<string, string>) => { method: string; path: string; body?: unknown; tab: string; done: string }> = {
    command: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/command`, body: { command: f.command ?? '' }, tab: 'console', done: `Sent: ${f.command}` }),
    backup: (n) => ({ method: 'POST', path: `/api/v1/servers/${n}/backup`, tab: 'backups', done: 'Backing up.' }),
    restore: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/restore-backup`, body: { backup_id: f.backup_id }, tab: 'backups', done: 'Restoring.' }),
    export: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/backups/${encodeURIComponent(f.backup_id ?? '')}/export`, tab: 'backups', done: 'Export started: its download appears in the jobs.' }),
    'delete-file': (n, f) => ({ method: 'DELETE', path: `/api/v1/servers/${n}/file?path=${encodeURIComponent(f.path ?? '')}`, tab: 'files', done: `Deleted ${f.path}.` }),
    unzip: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/files/unzip?path=${encodeURIComponent(f.path ?? '')}`, body: {}, tab: 'files', done: `Unzipping ${f.path}.` }),
    whitelist: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/access/whitelist`, body: { action: f.op ?? 'add', player: f.player }, tab: 'players', done: `Whitelist: ${f.op ?? 'add'} ${f.player}.` }),
    ban: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/access/ban`, body: { action: f.op ?? 'ban', player: f.player }, tab: 'players', done: `${f.op ?? 'ban'} ${f.player}.` }),
    settings: (n, f) => ({ method: 'PATCH', path: `/api/v1/servers/${n}`, body: { ...(f.display_name ? { displayName: f.display_name } : {}), ...(f.autostart_policy ? { autostartPolicy: f.autostart_policy } : {}) }, tab: 'settings', done: 'Saved.' }),
    schedule: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/schedules`, body: { label: f.label, action: f.action, ...(f.command ? { command: f.command } : {}), every_minutes: Number(f.every_minutes) || 0 }, tab: 'schedules', done: 'Scheduled.' }),
  };
  app.post('/servers/:name/do/:what', async (c) => {
    const name = c.req.param('name');
    const make = actions[c.req.param('what')];
    if (!SERVER_NAME.test(name) || !make) return c.notFound();
    const form = await web.form(c);
    const call = make(name, form);
    const answer = await web.api(c, call.method, call.path, call.body);
    const extra = form.dir !== undefined ? `&dir=${encodeURIComponent(form.dir)}` : '';
    return web.back(c, `/servers/${name}?tab=${call.tab}${extra}`, answer.ok ? { done: call.done } : { error: answer.error?.message ?? 'Refused.' });
  });

  app.get('/submissions', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const mine = await web.api<{ submissions: Array<Record<string, unknown>> }>(c, 'GET', '/api/v1/me/submissions');
    return web.render(
      c,
      { title: 'Submissions', viewer, notice: mine.ok ? undefined : { text: mine.error?.message ?? 'Unavailable.', error: true } },
      <>
        <p>Modpacks you sent for review; staff approve them into images.</p>
        <RecordTable caption="Your submissions" rows={mine.ok ? mine.body.submissions : []} columns={['display_name', 'status', 'image_ref', 'build_status', 'created_at']} />
      </>,
    );
  });
}

async function tabContent(c: Context<AppEnv>, web: Web, name: string, tab: Tab): Promise<{ body: unknown; scripts?: string[]; styles?: string[] }> {
  const base = `/servers/${name}`;
  const api = `/api/v1/servers/${name}`;
  switch (tab) {
    case 'console':
      return {
        scripts: ['console.js'],
        body: (
          <section aria-labelledby="console-heading">
            <h2 id="console-heading">Console</h2>
            <pre class="console" id="console-out" data-stream={`${api}/console`} tabindex={0} aria-label="Console output" aria-live="polite" />
            <form id="command-form" data-server={name} method="post" action={`${base}/do/command`}>
              <label for="command">Command</label>
              <fieldset role="group">
                <input id="command" name="command" placeholder="say hello" autocomplete="off" required />
                <button type="submit">Send</button>
              </fieldset>
            </form>
            <p id="command-status" hidden role="status" />
          </section>
        ),
      };
    case 'players': {
      const [players, whitelist, bans] = await Promise.all([
        web.api<{ players: string[]; online: number; max: number }>(c, 'GET', `${api}/access/players`),
        web.api<{ players: string[] }>(c, 'GET', `${api}/access/whitelist`),
        web.api<{ players: string[] }>(c, 'GET', `${api}/access/ban`),
      ]);
      const list = (a: typeof whitelist) => (a.ok ? (a.body.players.length ? a.body.players.join(', ') : 'none') : (a.error?.message ?? 'unavailable'));
      return {
        body: (
          <section aria-labelledby="players-heading">
            <h2 id="players-heading">Players</h2>
            <p>{`Online: ${list(players)}`}</p>
            <p>{`Whitelist: ${list(whitelist)}`}</p>
            <p>{`Banned: ${list(bans)}`}</p>
            <form method="post" action={`${base}/do/whitelist`}>
              <Field name="player" label="Player name" required />
              <fieldset role="group" aria-label="Whitelist">
                <button type="submit" name="op" value="add">Add to the whitelist</button>
                <button type="submit" name="op" value="remove" class="secondary">Remove from the whitelist</button>
              </fieldset>
            </form>
            <p><a href={`${base}?tab=console`}>Ops, kicks and permissions: use the console.</a></p>
          </section>
        ),
      };
    }
    case 'schedules': {
      const list = await web.api<{ schedules: Array<Record<string, unknown>> }>(c, 'GET', `${api}/schedules`);
      return {
        body: (
          <section aria-labelledby="schedules-heading">
            <h2 id="schedules-heading">Schedules</h2>
            <RecordTable caption="Schedules" rows={list.ok ? list.body.schedules : []} columns={['label', 'action', 'command', 'every_minutes', 'next_run_at', 'last_result']} />
            <form method="post" action={`${base}/do/schedule`}>
              <div class="grid">
                <Field name="label" label="Label" required />
                <label for="f-action">Action
                  <select id="f-action" name="action">
                    {['command', 'restart', 'stop', 'start', 'backup'].map((a) => <option value={a}>{a}</option>)}
                  </select>
                </label>
              </div>
              <div class="grid">
                <Field name="command" label="Command (for a command)" />
                <Field name="every_minutes" label="Every how many minutes" type="number" value="60" />
              </div>
              <button type="submit">Add the schedule</button>
            </form>
          </section>
        ),
      };
    }
    case 'backups': {
      const [backups, jobs] = await Promise.all([
        web.api<{ backups: Array<Record<string, unknown>> }>(c, 'GET', `/api/v1/backups?server=${name}`),
        web.api<{ jobs: Array<Record<string, unknown>> }>(c, 'GET', `${api}/jobs`),
      ]);
      const rows = backups.ok ? backups.body.backups : [];
      return {
        body: (
          <section aria-labelledby="backups-heading">
            <h2 id="backups-heading">Backups</h2>
            <ActionButton action={`${base}/do/backup`} label="Back up now" />
            {rows.length === 0 ? <p>No backups yet.</p> : (
              <table class="striped">
                <thead><tr><th scope="col">Taken</th><th scope="col">Reason</th><th scope="col">Size</th><th scope="col">Actions</th></tr></thead>
                <tbody>
                  {rows.map((b) => (
                    <tr>
                      <td>{show(b.created_at)}</td>
                      <td>{show(b.reason)}</td>
                      <td>{show(b.size_bytes)}</td>
                      <td class="actions">
                        <ActionButton action={`${base}/do/restore`} fields={{ backup_id: show(b.id) }} label="Restore" secondary />
                        <ActionButton action={`${base}/do/export`} fields={{ backup_id: show(b.id) }} label="Export" secondary />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>Jobs</h3>
            <RecordTable caption="Jobs" rows={jobs.ok ? jobs.body.jobs : []} columns={['kind', 'state', 'message', 'started_at', 'finished_at', 'download_url']} />
          </section>
        ),
      };
    }
    case 'files': {
      const dir = (c.req.query('dir') ?? '').replace(/^\/+|\/+$/g, '');
      const listing = await web.api<{ entries: Array<{ name: string; size: number; is_dir: boolean; mod_time: string }>; free_bytes: number }>(c, 'GET', `${api}/files?path=${encodeURIComponent(dir)}`);
      const up = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
      return {
        scripts: ['upload.js'],
        body: (
          <section aria-labelledby="files-heading">
            <h2 id="files-heading">{`Files: /${dir}`}</h2>
            {dir ? <p><a href={`${base}?tab=files&dir=${encodeURIComponent(up)}`}>Up one folder</a></p> : null}
            {!listing.ok ? <p class="notice error">{listing.error?.message}</p> : (
              <table class="striped">
                <thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Changed</th><th scope="col">Actions</th></tr></thead>
                <tbody>
                  {listing.body.entries.map((e) => {
                    const path = dir ? `${dir}/${e.name}` : e.name;
                    return (
                      <tr>
                        <td>{e.is_dir ? <a href={`${base}?tab=files&dir=${encodeURIComponent(path)}`}>{`${e.name}/`}</a> : e.name}</td>
                        <td>{e.is_dir ? '' : String(e.size)}</td>
                        <td>{e.mod_time}</td>
                        <td class="actions">
                          {e.name.endsWith('.zip') ? <ActionButton action={`${base}/do/unzip`} fields={{ path, dir }} label="Unzip" secondary /> : null}
                          <ActionButton action={`${base}/do/delete-file`} fields={{ path, dir }} label={`Delete ${e.name}`} secondary />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
            <form id="upload-form" data-server={name} data-dir={dir}>
              <label for="upload-file">Upload a file here (sent in parts)</label>
              <input id="upload-file" type="file" name="file" required />
              <button type="submit">Upload</button>
            </form>
            <p id="upload-status" hidden role="status" />
          </section>
        ),
      };
    }
    case 'settings':
      return {
        body: (
          <section aria-labelledby="settings-heading">
            <h2 id="settings-heading">Settings</h2>
            <form method="post" action={`${base}/do/settings`}>
              <Field name="display_name" label="Display name" />
              <label for="f-autostart">Who may wake it from the lobby
                <select id="f-autostart" name="autostart_policy">
                  <option value="">unchanged</option>
                  <option value="ownerOnly">only me</option>
                  <option value="allowlist">my allowlist</option>
                  <option value="public">anyone</option>
                </select>
              </label>
              <button type="submit">Save</button>
            </form>
          </section>
        ),
      };
    default: {
      const activity = await web.api<{ entries?: Array<Record<string, unknown>>; activity?: Array<Record<string, unknown>> }>(c, 'GET', `${api}/activity`);
      const rows = activity.ok ? (activity.body.entries ?? activity.body.activity ?? []) : [];
      return {
        scripts: ['uplot.js', 'chart.js'],
        styles: ['uplot.css'],
        body: (
          <>
            <section aria-labelledby="usage-heading">
              <h2 id="usage-heading">Usage, last 24 hours</h2>
              <div id="usage-chart" data-server={name} role="img" aria-label="Players and memory over the last 24 hours" />
            </section>
            <section aria-labelledby="activity-heading">
              <h2 id="activity-heading">Activity</h2>
              <RecordTable caption="Activity" rows={rows.slice(0, 20)} columns={['at', 'action', 'actor', 'detail']} />
            </section>
          </>
        ),
      };
    }
  }
}
