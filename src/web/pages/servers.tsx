import type { Context, Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { noticeOf, type Web } from '../index.js';
import { ActionTable, FormError, Pager, PostForm, TextArea, offsetOf, on, refused, stateOf, type FormState } from '../forms.js';
import { ActionButton, Field, RecordTable, show } from '../layout.js';
import { MembersTab, accessOf, permissionsOf, type Need, type ServerAccess } from './members.js';

interface ServerRow {
  name: string;
  displayName?: string;
  phase?: string;
  playersOnline: number;
  playersMax: number;
  owned: boolean;
  claimable: boolean;
  desiredState?: string;
  /** Shared with the viewer by its owner, with these permissions. */
  member?: boolean;
  permissions?: string[];
}

/** Rows of the server list and of a server's activity a page shows. */
const ACTIVITY_PAGE = 20;
const LIST_PAGE = 100;
/** A player name, as the access routes check it, before a page builds a console command with it. */
const PLAYER = /^[A-Za-z0-9_]{1,16}$/;

/** A schedule's choices, as the schedules API takes them. */
const EVERY_MINUTES = [15, 30, 60, 120, 180, 240, 360, 480, 720];
const WARN_MINUTES = [0, 1, 5, 10, 15, 30];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** When a schedule runs, as a person reads it. */
function whenOf(r: Record<string, unknown>): string {
  const every = Number(r.every_minutes ?? 0);
  const minute = Number(r.minute_of_day ?? 0);
  const at = every === 0 ? `daily at ${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}` : `every ${every} minutes`;
  const bits = Number(r.weekdays ?? 0x7f);
  const days = bits === 0x7f ? '' : ` on ${WEEKDAYS.filter((_d, i) => bits & (1 << i)).map((d) => d.slice(0, 3)).join(', ')}`;
  return `${at}${days} (${show(r.timezone)})`;
}

/** A name inside the folder a form was sent from. */
const inDir = (f: { dir?: string }, name: string) => [f.dir ?? '', name.trim()].filter(Boolean).join('/');

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
            <td>{s.owned ? 'yours' : s.member ? `shared with you: ${(s.permissions ?? []).join(', ') || 'status only'}` : s.claimable ? 'claimable' : ''}</td>
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

const TABS = ['overview', 'console', 'players', 'schedules', 'backups', 'files', 'settings', 'members'] as const;
type Tab = (typeof TABS)[number];
/** What a tab needs: a member sees only the tabs its permissions allow (the API refuses the rest anyway). */
const TAB_NEED: Partial<Record<Tab, Need>> = { console: 'console.read', players: 'access', schedules: 'schedules', backups: 'backups.read', files: 'files.read', settings: 'owner', members: 'owner' };
const mayOpen = (access: ServerAccess, tab: Tab) => TAB_NEED[tab] === undefined || access.may(TAB_NEED[tab]);

export function serverPages(app: Hono<AppEnv>, web: Web): void {
  const listPage = async (c: Context<AppEnv>, title: string, form?: { values: Record<string, string>; errors: Record<string, string> }, status = 200) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const mine = await web.api<{ servers: ServerRow[] }>(c, 'GET', '/api/v1/me/servers');
    // Yours first, then those shared with you, then those anyone may claim (each in the API's order).
    const rank = (s: ServerRow) => (s.owned ? 0 : s.member ? 1 : 2);
    const all = mine.ok ? [...mine.body.servers].sort((a, b) => rank(a) - rank(b)) : [];
    // `/me/servers` has no paging of its own: the page shows it LIST_PAGE rows at a time.
    const offset = Math.min(offsetOf(c.req.query('offset')), Math.max(0, all.length - 1));
    const servers = all.slice(offset, offset + LIST_PAGE);
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
          <Pager base={new URL(c.req.url).pathname} offset={offset} limit={LIST_PAGE} total={all.length} shown={servers.length} label="Server list pages" />
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

  /** A server's page at one tab; `state` is a form the API just refused, shown with its errors. */
  const serverPage = async (c: Context<AppEnv>, name: string, asked: Tab, state?: FormState) => {
    let tab = asked;
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const status = await web.api<Record<string, unknown> & { phase: string; playersOnline: number; playersMax: number }>(c, 'GET', `/api/v1/servers/${name}/status`);
    if (!status.ok) {
      return web.render(c, { title: name, viewer, notice: { text: status.error?.message ?? 'No such server.', error: true } }, <p><a href="/servers">Back to the servers</a></p>, status.status);
    }
    const s = status.body;
    const base = `/servers/${name}`;
    const access = await accessOf(c, web, name);
    if (!mayOpen(access, tab)) tab = 'overview';
    const content = await tabContent(c, web, name, tab, access, state);
    return web.render(
      c,
      { title: show(s.displayName ?? name), viewer, notice: state ? undefined : noticeOf(c), scripts: ['live.js', ...(content.scripts ?? [])], styles: content.styles },
      <>
        <p data-live-server={name}>
          {'Phase: '}<span class="phase" data-phase={s.phase} id="server-phase">{s.phase}</span>
          {' · players '}<span class="players">{`${s.playersOnline} / ${s.playersMax}`}</span>
          {` · desired ${show(s.desiredState)}`}
        </p>
        {s.retiring ? <p class="notice error" role="status">{`Retiring since ${show((s.retiring as { requested_at: string }).requested_at)}: it stops, then ${(s.retiring as { delete: boolean }).delete ? 'is deleted' : 'is released'}.`}</p> : null}
        {access.permissions ? (
          <div class="actions" role="group" aria-label="Membership">
            <p>{`Shared with you. You may: ${access.permissions.join(', ') || 'see its status'}.`}</p>
            <ActionButton action={`${base}/do/leave`} fields={{ user_id: viewer.user_id }} label="Leave this server" secondary />
          </div>
        ) : null}
        {access.may('power') ? (
          <div class="actions" role="group" aria-label="Power">
            <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="wake" label="Wake" />
            <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="stop" label="Stop" secondary />
            <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="restart" label="Restart" secondary />
            <ActionButton action={`${base}/power`} fields={{ tab }} name="action" value="emergency-stop" label="Emergency stop" secondary />
          </div>
        ) : null}
        <nav class="tabs" aria-label="Server sections">
          <ul>
            {TABS.filter((t) => mayOpen(access, t)).map((t) => (
              <li><a href={`${base}?tab=${t}`} aria-current={t === tab ? 'page' : undefined}>{t[0]!.toUpperCase() + t.slice(1)}</a></li>
            ))}
          </ul>
        </nav>
        {content.body}
      </>,
      state?.status ?? 200,
    );
  };

  app.get('/servers/:name', async (c) => {
    const name = c.req.param('name');
    if (!SERVER_NAME.test(name)) return c.notFound();
    const tab: Tab = (TABS as readonly string[]).includes(c.req.query('tab') ?? '') ? (c.req.query('tab') as Tab) : 'overview';
    return serverPage(c, name, tab);
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

  /**
   * The server's small forms: each one API call, then back to its tab with what happened; a
   * refusal shows the page again with the form as typed and the message beside its field.
   */
  type Call = { method: string; path: string; body?: unknown; tab: Tab; done: string; fields?: string[]; byCode?: Record<string, string>; to?: string; refuse?: string };
  const actions: Record<string, (name: string, f: Record<string, string>) => Call> = {
    command: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/command`, body: { command: f.command ?? '' }, tab: 'console', done: `Sent: ${f.command}`, fields: ['command'] }),
    backup: (n) => ({ method: 'POST', path: `/api/v1/servers/${n}/backup`, tab: 'backups', done: 'Backing up.' }),
    restore: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/restore-backup`, body: { backup_id: f.backup_id }, tab: 'backups', done: 'Restoring.' }),
    export: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/backups/${encodeURIComponent(f.backup_id ?? '')}/export`, tab: 'backups', done: 'Export started: its download appears in the jobs.' }),
    'delete-file': (n, f) => ({ method: 'DELETE', path: `/api/v1/servers/${n}/file?path=${encodeURIComponent(f.path ?? '')}`, tab: 'files', done: `Deleted ${f.path}.` }),
    unzip: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/files/unzip?path=${encodeURIComponent(f.path ?? '')}`, body: f.overwrite === 'on' ? { overwrite: true } : {}, tab: 'files', done: `Unzipping ${f.path}: the files appear once it is done.` }),
    'save-file': (n, f) => {
      // A text area sends CRLF line ends: a file that had LF ones keeps them.
      const text = f.eol === 'crlf' ? (f.content ?? '') : (f.content ?? '').replace(/\r\n/g, '\n');
      const body: Record<string, unknown> = { content: Buffer.from(text, 'utf8').toString('base64') };
      if (f.expect_sha256) body.expect_sha256 = f.expect_sha256;
      return { method: 'PUT', path: `/api/v1/servers/${n}/file?path=${encodeURIComponent(f.path ?? '')}`, body, tab: 'files', done: `Saved ${f.path}.`, fields: ['content'], byCode: { file_changed: 'content', volume_full: 'content', too_large: 'content', digest_mismatch: 'content' }, to: `/servers/${n}?tab=files&dir=${encodeURIComponent(f.dir ?? '')}&edit=${encodeURIComponent(f.path ?? '')}` };
    },
    'new-file': (n, f) => {
      const path = inDir(f, f.name ?? '');
      return { method: 'PUT', path: `/api/v1/servers/${n}/file?path=${encodeURIComponent(path)}`, body: { content: '', create_only: true }, tab: 'files', done: `Created ${path}.`, fields: ['name'], byCode: { file_exists: 'name', bad_path: 'name', bad_request: 'name', not_found: 'name' }, to: `/servers/${n}?tab=files&dir=${encodeURIComponent(f.dir ?? '')}&edit=${encodeURIComponent(path)}` };
    },
    mkdir: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/files/mkdir?path=${encodeURIComponent(inDir(f, f.name ?? ''))}`, tab: 'files', done: `Made the folder ${inDir(f, f.name ?? '')}.`, fields: ['name'], byCode: { file_exists: 'name', bad_path: 'name', bad_request: 'name', not_found: 'name' } }),
    whitelist: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/access/whitelist`, body: { action: f.op ?? 'add', player: f.player }, tab: 'players', done: `Whitelist: ${f.op ?? 'add'} ${f.player}.`, fields: ['player'] }),
    ban: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/access/ban`, body: { action: f.op === 'pardon' ? 'pardon' : 'ban', player: f.player }, tab: 'players', done: `${f.op === 'pardon' ? 'Pardoned' : 'Banned'} ${f.player}.`, fields: ['player'] }),
    kick: (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/access/kick`, body: { player: f.player }, tab: 'players', done: `Kicked ${f.player}.`, fields: ['player'] }),
    // The API has no operator route: `op`/`deop` go through the console, the name checked here first.
    op: (n, f) => ({
      method: 'POST',
      path: `/api/v1/servers/${n}/command`,
      body: { command: `${f.op === 'deop' ? 'deop' : 'op'} ${f.player ?? ''}` },
      tab: 'players',
      done: `${f.op === 'deop' ? 'No longer an operator' : 'Made an operator'}: ${f.player}.`,
      fields: ['player'],
      refuse: PLAYER.test(f.player ?? '') ? undefined : 'A player name is 1 to 16 letters, digits or underscores.',
    }),
    allowlist: (n, f) => ({ method: 'PUT', path: `/api/v1/servers/${n}/allowlist/${encodeURIComponent((f.uuid ?? '').trim())}`, body: { can_wake: f.can_wake === 'on' }, tab: 'players', done: `Allowlist: ${(f.uuid ?? '').trim()} ${f.can_wake === 'on' ? 'may' : 'may not'} wake it.`, fields: ['uuid', 'can_wake'], byCode: { bad_request: 'uuid', not_found: 'uuid' } }),
    settings: (n, f) => ({ method: 'PATCH', path: `/api/v1/servers/${n}`, body: { ...(f.displayName?.trim() ? { displayName: f.displayName.trim() } : {}), ...(f.autostartPolicy ? { autostartPolicy: f.autostartPolicy } : {}) }, tab: 'settings', done: 'Saved.', fields: ['displayName', 'autostartPolicy'] }),
    permission: (n, f) => {
      // LuckPerms: granted and denied are `set` with a value (an omitted value would grant), unset clears it.
      const how = f.how === 'deny' || f.how === 'clear' ? f.how : 'grant';
      const world = (f.world ?? '').trim();
      return {
        method: 'POST',
        path: `/api/v1/servers/${n}/access/permission`,
        body: { action: how === 'clear' ? 'unset' : 'set', player: (f.player ?? '').trim(), node: (f.node ?? '').trim(), ...(how === 'clear' ? {} : { value: how === 'grant' }), ...(world ? { world } : {}) },
        tab: 'players',
        done: `${(f.node ?? '').trim()} ${how === 'clear' ? 'unset' : how === 'grant' ? 'granted' : 'denied'} for ${(f.player ?? '').trim()}.`,
        fields: ['player', 'node', 'world'],
      };
    },
    group: (n, f) => ({
      method: 'POST',
      path: `/api/v1/servers/${n}/access/group`,
      body: { action: f.how === 'remove' ? 'remove' : 'add', player: (f.player ?? '').trim(), group: (f.group ?? '').trim() },
      tab: 'players',
      done: `${(f.player ?? '').trim()} ${f.how === 'remove' ? 'left' : 'joined'} the group ${(f.group ?? '').trim()}.`,
      fields: ['player', 'group'],
    }),
    'member-add': (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/members`, body: { user: (f.user ?? '').trim(), permissions: permissionsOf(f) }, tab: 'members', done: `${(f.user ?? '').trim()} is a member now.`, fields: ['user', 'permissions'], byCode: { user_not_found: 'user', already_member: 'user', bad_request: 'user' } }),
    'member-update': (n, f) => ({ method: 'PUT', path: `/api/v1/servers/${n}/members/${encodeURIComponent(f.user_id ?? '')}`, body: { permissions: permissionsOf(f) }, tab: 'members', done: `Saved what ${f.member ?? 'the member'} may do.` }),
    leave: (n, f) => ({ method: 'DELETE', path: `/api/v1/servers/${n}/members/${encodeURIComponent(f.user_id ?? '')}`, tab: 'overview', done: `You left ${n}.`, to: '/servers' }),
    'member-remove': (n, f) => ({ method: 'DELETE', path: `/api/v1/servers/${n}/members/${encodeURIComponent(f.user_id ?? '')}`, tab: 'members', done: `${f.member ?? 'The member'} is no longer a member.` }),
    schedule: (n, f) => {
      const every = Number(f.every_minutes ?? 0) || 0;
      const [h, m] = (f.time ?? '').split(':').map(Number);
      const body = {
        label: (f.label ?? '').trim(),
        action: f.action ?? '',
        ...(f.action === 'command' ? { command: f.command ?? '' } : {}),
        every_minutes: every,
        ...(every === 0 && Number.isInteger(h) && Number.isInteger(m) ? { minute_of_day: h! * 60 + m! } : {}),
        // Bits 0 to 6, Sunday first.
        weekdays: WEEKDAYS.reduce((bits, _d, i) => (on(f[`day.${i}`]) ? bits | (1 << i) : bits), 0),
        timezone: (f.timezone ?? '').trim(),
        warn_minutes: Number(f.warn_minutes ?? 0) || 0,
      };
      return { method: 'POST', path: `/api/v1/servers/${n}/schedules`, body, tab: 'schedules', done: `Scheduled ${body.label}.`, fields: ['label', 'action', 'command', 'every_minutes', 'timezone', 'warn_minutes'] };
    },
    'schedule-run': (n, f) => ({ method: 'POST', path: `/api/v1/servers/${n}/schedules/${encodeURIComponent(f.id ?? '')}/run`, tab: 'schedules', done: `${f.label ?? 'The schedule'} runs now.` }),
    'schedule-delete': (n, f) => ({ method: 'DELETE', path: `/api/v1/servers/${n}/schedules/${encodeURIComponent(f.id ?? '')}`, tab: 'schedules', done: `Removed ${f.label ?? 'the schedule'}.` }),
  };
  app.post('/servers/:name/do/:what', async (c) => {
    const name = c.req.param('name');
    const what = c.req.param('what');
    const make = actions[what];
    if (!SERVER_NAME.test(name) || !make) return c.notFound();
    const form = await web.form(c);
    const call = make(name, form);
    if (call.refuse) return serverPage(c, name, call.tab, { form: what, values: form, errors: { [call.fields?.[0] ?? '_']: call.refuse }, status: 400 });
    const answer = await web.api(c, call.method, call.path, call.body);
    if (answer.ok) {
      const extra = form.dir !== undefined ? `&dir=${encodeURIComponent(form.dir)}` : '';
      return web.back(c, call.to ?? `/servers/${name}?tab=${call.tab}${extra}`, { done: call.done });
    }
    if (call.fields) {
      return serverPage(c, name, call.tab, refused(what, form, answer, call.fields, call.byCode));
    }
    const extra = form.dir !== undefined ? `&dir=${encodeURIComponent(form.dir)}` : '';
    return web.back(c, `/servers/${name}?tab=${call.tab}${extra}`, { error: answer.error?.message ?? 'Refused.' });
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

async function tabContent(c: Context<AppEnv>, web: Web, name: string, tab: Tab, access: ServerAccess, state?: FormState): Promise<{ body: unknown; scripts?: string[]; styles?: string[] }> {
  const base = `/servers/${name}`;
  const api = `/api/v1/servers/${name}`;
  // Where the page is (folder, file being edited): the address, or the refused form's own fields.
  const q = (k: string) => c.req.query(k) ?? state?.values[k];
  switch (tab) {
    case 'console':
      return {
        scripts: ['console.js'],
        body: (
          <section aria-labelledby="console-heading">
            <h2 id="console-heading">Console</h2>
            <pre class="console" id="console-out" data-stream={`${api}/console`} tabindex={0} aria-label="Console output" aria-live="polite" />
            {access.may('console.command') ? (
              <form id="command-form" data-server={name} method="post" action={`${base}/do/command`}>
                <label for="command">Command</label>
                <fieldset role="group">
                  <input id="command" name="command" placeholder="say hello" autocomplete="off" required />
                  <button type="submit">Send</button>
                </fieldset>
              </form>
            ) : <p>Your permissions do not include sending commands.</p>}
            <p id="command-status" hidden role="status" />
          </section>
        ),
      };
    case 'players': {
      const [players, whitelist, bans, allowlist] = await Promise.all([
        web.api<{ players: string[]; online: number; max: number }>(c, 'GET', `${api}/access/players`),
        web.api<{ players: string[] }>(c, 'GET', `${api}/access/whitelist`),
        web.api<{ players: string[] }>(c, 'GET', `${api}/access/ban`),
        web.api<{ entries: Array<{ mc_uuid: string; can_wake: boolean; added_at: string }> }>(c, 'GET', `${api}/allowlist`),
      ]);
      const list = (a: typeof whitelist) => (a.ok ? (a.body.players.length ? a.body.players.join(', ') : 'none') : (a.error?.message ?? 'unavailable'));
      return {
        body: (
          <section aria-labelledby="players-heading">
            <h2 id="players-heading">Players</h2>
            <p>{`Online: ${list(players)}`}</p>
            <p>{`Whitelist: ${list(whitelist)}`}</p>
            <p id="ban-list">{`Banned: ${list(bans)}`}</p>
            <p><small>Lists and changes need the server running; they go to the game over RCON.</small></p>
            <div class="grid">
              <PostForm action={`${base}/do/whitelist`} heading={{ id: 'wl-heading', text: 'Whitelist' }} state={stateOf(state, 'whitelist')} rows={[{ id: 'wl-player', name: 'player', label: 'Player name', required: true }]} submit={{ name: 'op', label: 'Whitelist', buttons: [['add', 'Add'], ['remove', 'Remove']] }} />
              <PostForm action={`${base}/do/ban`} heading={{ id: 'ban-heading', text: 'Bans' }} state={stateOf(state, 'ban')} rows={[{ id: 'ban-player', name: 'player', label: 'Player name', required: true }]} submit={{ name: 'op', label: 'Bans', buttons: [['ban', 'Ban'], ['pardon', 'Pardon']] }} />
            </div>
            <div class="grid">
              <PostForm action={`${base}/do/op`} heading={{ id: 'op-heading', text: 'Operators' }} state={stateOf(state, 'op')} rows={[{ id: 'op-player', name: 'player', label: 'Player name', required: true }]} submit={{ name: 'op', label: 'Operators', buttons: [['op', 'Make operator'], ['deop', 'Remove operator']] }} />
              <PostForm action={`${base}/do/kick`} heading={{ id: 'kick-heading', text: 'Kick' }} state={stateOf(state, 'kick')} rows={[{ id: 'kick-player', name: 'player', label: 'Player name', required: true }]} submit="Kick (they may rejoin)" secondary />
            </div>
            <h3>Permissions and groups (LuckPerms)</h3>
            <div class="grid">
              <PostForm
                action={`${base}/do/permission`}
                label="A player's permission"
                state={stateOf(state, 'permission')}
                rows={[
                  [{ id: 'lp-player', name: 'player', label: 'Player name', required: true }, { id: 'lp-node', name: 'node', label: 'Permission node', required: true, placeholder: 'essentials.fly' }],
                  [{ id: 'lp-world', name: 'world', label: 'World (optional)' }, { kind: 'select', id: 'lp-how', name: 'how', label: 'Make it', options: [['grant', 'granted'], ['deny', 'denied'], ['clear', 'unset']] }],
                ]}
                submit="Set the permission"
                secondary
              />
              <PostForm
                action={`${base}/do/group`}
                label="A player's group"
                state={stateOf(state, 'group')}
                rows={[
                  [{ id: 'grp-player', name: 'player', label: 'Player name', required: true }, { id: 'grp-group', name: 'group', label: 'Group', required: true, placeholder: 'builder' }],
                  { kind: 'select', id: 'grp-how', name: 'how', label: 'Action', options: [['add', 'add to the group'], ['remove', 'remove from the group']] },
                ]}
                submit="Change the group"
                secondary
              />
            </div>
            <section aria-labelledby="allowlist-heading">
              <h3 id="allowlist-heading">Allowlist (who may wake it from the lobby)</h3>
              {allowlist.ok ? (
                <RecordTable caption="Allowlist" rows={allowlist.body.entries as unknown as Array<Record<string, unknown>>} columns={['mc_uuid', 'can_wake', 'added_at']} />
              ) : <p>{allowlist.error?.message}</p>}
              <PostForm
                action={`${base}/do/allowlist`}
                state={stateOf(state, 'allowlist')}
                rows={[{ id: 'al-uuid', name: 'uuid', label: 'Player UUID', required: true, placeholder: '069a79f4-44e9-4726-a5be-fca90e38aaf5' }, { kind: 'check', id: 'al-can-wake', name: 'can_wake', label: 'May wake the server', checked: true }]}
                submit="Save"
                secondary
              />
            </section>
            <p><a href={`${base}?tab=console`}>Anything else: the console.</a></p>
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
            {list.ok ? null : <p class="notice error" role="alert">{list.error?.message ?? 'The schedules cannot be read now.'}</p>}
            <ActionTable
              caption="Schedules"
              rows={list.ok ? list.body.schedules : []}
              empty="Nothing is scheduled."
              columns={[
                ['Label', (r) => show(r.label)],
                ['Does', (r) => (r.action === 'command' ? `command: ${show(r.command)}` : show(r.action))],
                ['When', (r) => whenOf(r)],
                ['Next run', (r) => show(r.next_run_at) || 'not planned'],
                ['Last result', (r) => show(r.last_result)],
              ]}
              actions={(r) => (
                <>
                  <ActionButton action={`${base}/do/schedule-run`} fields={{ id: show(r.id), label: show(r.label) }} label={`Run ${show(r.label)} now`} secondary />
                  <ActionButton action={`${base}/do/schedule-delete`} fields={{ id: show(r.id), label: show(r.label) }} label={`Remove ${show(r.label)}`} secondary />
                </>
              )}
            />
            <h3>Add a schedule</h3>
            <PostForm
              action={`${base}/do/schedule`}
              state={stateOf(state, 'schedule')}
              rows={[
                [{ id: 'sc-label', name: 'label', label: 'Label', required: true }, { kind: 'select', id: 'sc-action', name: 'action', label: 'Action', options: ['command', 'restart', 'stop', 'start', 'backup'] }],
                { id: 'sc-command', name: 'command', label: 'Command (for a command only)', placeholder: 'say Backup at noon' },
                [
                  { kind: 'select', id: 'sc-every', name: 'every_minutes', label: 'Repeat', options: [['0', 'once a day, at the time'], ...EVERY_MINUTES.map((m): [string, string] => [String(m), m < 60 ? `every ${m} minutes` : `every ${m / 60} hour${m === 60 ? '' : 's'}`])], value: '0' },
                  { id: 'sc-time', name: 'time', label: 'Time of day (once a day)', type: 'time', value: '04:00' },
                  { id: 'sc-zone', name: 'timezone', label: 'Time zone (IANA)', value: 'UTC', required: true },
                ],
                { legend: 'On these days', fields: WEEKDAYS.map((d, i) => ({ kind: 'check' as const, id: `sc-day-${i}`, name: `day.${i}`, label: d, checked: true })) },
                { kind: 'select', id: 'sc-warn', name: 'warn_minutes', label: 'Warn the players first (restart, stop, backup)', options: WARN_MINUTES.map((m): [string, string] => [String(m), m === 0 ? 'no warning' : `${m} minute${m === 1 ? '' : 's'} before`]) },
              ]}
              submit="Add the schedule"
            />
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
            {access.may('backups.write') ? <ActionButton action={`${base}/do/backup`} label="Back up now" /> : null}
            {rows.length === 0 ? <p>No backups yet.</p> : (
              <table class="striped">
                <thead><tr><th scope="col">Taken</th><th scope="col">Reason</th><th scope="col">Size</th>{access.may('backups.write') ? <th scope="col">Actions</th> : null}</tr></thead>
                <tbody>
                  {rows.map((b) => (
                    <tr>
                      <td>{show(b.created_at)}</td>
                      <td>{show(b.reason)}</td>
                      <td>{show(b.size_bytes)}</td>
                      {access.may('backups.write') ? (
                        <td class="actions">
                          <ActionButton action={`${base}/do/restore`} fields={{ backup_id: show(b.id) }} label="Restore" secondary />
                          <ActionButton action={`${base}/do/export`} fields={{ backup_id: show(b.id) }} label="Export" secondary />
                        </td>
                      ) : null}
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
      const dir = (q('dir') ?? '').replace(/^\/+|\/+$/g, '');
      const edit = q('edit');
      if (edit) return { body: await fileEditor(c, web, name, dir, edit, access.may('files.write'), state) };
      const listing = await web.api<{ entries: Array<{ name: string; size: number; is_dir: boolean; mod_time: string }>; free_bytes: number }>(c, 'GET', `${api}/files?path=${encodeURIComponent(dir)}`);
      const ops = await web.api<{ ops: Array<Record<string, unknown>> }>(c, 'GET', `${api}/files/ops`);
      const up = dir.includes('/') ? dir.slice(0, dir.lastIndexOf('/')) : '';
      const writable = access.may('files.write');
      const at = (e: { name: string }) => (dir ? `${dir}/${e.name}` : e.name);
      const fileUrl = (path: string) => `${base}?tab=files&dir=${encodeURIComponent(dir)}&edit=${encodeURIComponent(path)}`;
      return {
        scripts: ['upload.js'],
        body: (
          <section aria-labelledby="files-heading">
            <h2 id="files-heading">{`Files: /${dir}`}</h2>
            {dir ? <p><a href={`${base}?tab=files&dir=${encodeURIComponent(up)}`}>Up one folder</a></p> : null}
            {state && state.form !== 'new-file' && state.form !== 'mkdir' ? <FormError errors={{ _: Object.values(state.errors)[0] ?? '' }} /> : null}
            {!listing.ok ? <p class="notice error">{listing.error?.message}</p> : (
              <ActionTable
                caption="Files"
                rows={listing.body.entries}
                empty="This folder is empty."
                columns={[
                  ['Name', (e) => (e.is_dir ? <a href={`${base}?tab=files&dir=${encodeURIComponent(at(e))}`}>{`${e.name}/`}</a> : <a href={fileUrl(at(e))}>{e.name}</a>)],
                  ['Size', (e) => (e.is_dir ? '' : String(e.size))],
                  ['Changed', (e) => e.mod_time],
                ]}
                actions={writable ? (e) => (
                  <>
                    {e.name.endsWith('.zip') ? <ActionButton action={`${base}/do/unzip`} fields={{ path: at(e), dir }} label={`Unzip ${e.name}`} secondary /> : null}
                    <ActionButton action={`${base}/do/delete-file`} fields={{ path: at(e), dir }} label={`Delete ${e.name}`} secondary />
                  </>
                ) : undefined}
              />
            )}
            {writable ? (
              <>
                <div class="grid">
                  <PostForm action={`${base}/do/new-file`} state={stateOf(state, 'new-file')} hidden={{ dir }} rows={[{ id: 'nf-name', name: 'name', label: 'New file', required: true, placeholder: 'notes.txt' }]} submit="Create and edit" secondary />
                  <PostForm action={`${base}/do/mkdir`} state={stateOf(state, 'mkdir')} hidden={{ dir }} rows={[{ id: 'md-name', name: 'name', label: 'New folder', required: true, placeholder: 'plugins' }]} submit="Make the folder" secondary />
                </div>
                <form id="upload-form" data-server={name} data-dir={dir}>
                  <label for="upload-file">Upload a file here (sent in parts)</label>
                  <input id="upload-file" type="file" name="file" required />
                  <button type="submit">Upload</button>
                </form>
              </>
            ) : <p>Your permissions let you read the files, not change them.</p>}
            <p id="upload-status" hidden role="status" />
            {ops.ok && ops.body.ops.length > 0 ? (
              <>
                <h3>Uploads and unzips</h3>
                <RecordTable caption="Uploads and unzips" rows={ops.body.ops.map((o) => ({ ...o, error: (o.error as { message?: string } | undefined)?.message }))} columns={['op', 'path', 'state', 'done', 'total', 'error', 'started_at']} />
              </>
            ) : null}
          </section>
        ),
      };
    }
    case 'settings':
      return {
        body: (
          <section aria-labelledby="settings-heading">
            <h2 id="settings-heading">Settings</h2>
            <PostForm
              action={`${base}/do/settings`}
              state={stateOf(state, 'settings')}
              rows={[
                { id: 'st-display', name: 'displayName', label: 'Display name (empty: unchanged)' },
                { kind: 'select', id: 'st-autostart', name: 'autostartPolicy', label: 'Who may wake it from the lobby', options: [['', 'unchanged'], ['ownerOnly', 'only the owner'], ['allowlist', 'the allowlist'], ['public', 'anyone']] },
              ]}
              submit="Save"
            />
          </section>
        ),
      };
    case 'members':
      return { body: <MembersTab base={base} members={access.members} add={stateOf(state, 'member-add')} change={{ ...stateOf(state, 'member-update'), user_id: state?.values.user_id }} /> };
    default: {
      // Usage and activity are the console's to read (`console.read`): a member without it sees neither.
      if (!access.may('console.read')) return { body: <p>Your permissions do not include this server's usage and activity.</p> };
      const offset = offsetOf(c.req.query('offset'));
      const activity = await web.api<{ entries: Array<Record<string, unknown>>; total: number }>(c, 'GET', `${api}/activity?limit=${ACTIVITY_PAGE}&offset=${offset}`);
      const rows = activity.ok ? activity.body.entries : [];
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
              {activity.ok ? null : <p>{activity.error?.message}</p>}
              <RecordTable caption="Activity" rows={rows} columns={['at', 'action', 'actor_username', 'target', 'detail']} />
              <Pager base={`${base}?tab=overview`} offset={offset} limit={ACTIVITY_PAGE} total={activity.ok ? activity.body.total : 0} shown={rows.length} label="Activity pages" />
            </section>
          </>
        ),
      };
    }
  }
}

/** The text of a file of the world, in a form that saves it only if nobody changed it since. */
async function fileEditor(c: Context<AppEnv>, web: Web, name: string, dir: string, path: string, writable: boolean, state?: FormState) {
  const base = `/servers/${name}`;
  const back = `${base}?tab=files&dir=${encodeURIComponent(dir)}`;
  const file = await web.api<{ path: string; content: string; sha256: string }>(c, 'GET', `/api/v1/servers/${name}/file?path=${encodeURIComponent(path)}`);
  const mine = stateOf(state, 'save-file');
  if (!file.ok) {
    return (
      <section aria-labelledby="editor-heading">
        <h2 id="editor-heading">{`Edit /${path}`}</h2>
        <p class="notice error" role="alert">{file.error?.message ?? 'The file cannot be read.'}</p>
        <p><a href={back}>Back to the folder</a></p>
      </section>
    );
  }
  const bytes = Buffer.from(file.body.content, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  // A file that is not text (a NUL, or bytes that are not UTF-8) is not offered for editing.
  const binary = bytes.includes(0) || Buffer.from(text, 'utf8').compare(bytes) !== 0;
  // After a refusal: what was typed, and the digest it was typed against (so a changed file stays refused).
  const content = state?.form === 'save-file' ? (mine.values.content ?? '') : text;
  const expect = state?.form === 'save-file' ? (mine.values.expect_sha256 ?? file.body.sha256) : file.body.sha256;
  return (
    <section aria-labelledby="editor-heading">
      <h2 id="editor-heading">{`Edit /${path}`}</h2>
      <p><a href={back}>Back to the folder</a>{` · ${bytes.length} bytes · sha-256 ${file.body.sha256.slice(0, 12)}…`}</p>
      {binary ? <p>This file is not text; download or replace it instead.</p> : !writable ? <pre tabindex={0} aria-label={`Content of /${path}`}>{text}</pre> : (
        <form method="post" action={`${base}/do/save-file`} id="editor-form">
          <input type="hidden" name="path" value={path} />
          <input type="hidden" name="dir" value={dir} />
          <input type="hidden" name="edit" value={path} />
          <input type="hidden" name="expect_sha256" value={expect} />
          <input type="hidden" name="eol" value={text.includes('\r\n') ? 'crlf' : 'lf'} />
          <TextArea id="editor-content" name="content" label="Content" value={content} error={mine.errors.content} rows={20} />
          {mine.errors.content && state?.status === 409 ? <p><a href={`${back}&edit=${encodeURIComponent(path)}`}>Load the file as it is now</a> (your text above is not saved).</p> : null}
          <FormError errors={mine.errors} />
          <button type="submit">Save</button>
        </form>
      )}
    </section>
  );
}
