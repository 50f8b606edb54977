import type { Context, Hono } from 'hono';
import type { Child } from 'hono/jsx';
import type { AppEnv } from '../../http/env.js';
import type { ApiAnswer } from '../api.js';
import { ActionTable, Input, Pager, PostForm, SecretOnce, localOf, offsetOf, on, refused, stateOf, utcOrNull, type FieldSpec, type FormState } from '../forms.js';
import { noticeOf, type Web } from '../index.js';
import { ActionButton, RecordTable, show } from '../layout.js';

type Row = Record<string, unknown>;

/** One staff page: its title, and its body from the API's reads (and a refused form, if one was). */
interface Section {
  slug: string;
  title: string;
  render(c: Context<AppEnv>, web: Web, state?: FormState): Promise<{ body: Child; status?: number; error?: string; scripts?: string[] }>;
}

/**
 * One form of a staff page: the API call its fields make, the fields a refusal may name, and
 * what to say when it is done. `shown` renders the answer instead of going back (a webhook's
 * secret is shown once, never put in an address).
 */
interface StaffForm {
  call(f: Record<string, string>, c: Context<AppEnv>): { method: string; path: string; body?: unknown };
  fields: string[];
  byCode?: Record<string, string>;
  done(f: Record<string, string>, body: Row): string;
  to?(f: Record<string, string>, body: Row): string;
  shown?(body: Row): Child;
}

const PAGE = 50;
const ROLES = ['user', 'admin', 'owner'];
const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'UNKNOWN'];
const WEBHOOK_EVENTS = ['server.start_failed', 'server.start_gave_up', 'backup.failed', 'backup.corrupt', 'build.blocked', 'submission.pending_review', 'schedule.failed', 'node.maintenance_started', 'node.maintenance_ended', 'webhook.test'];

/** The first list in an answer: `{users: [...]}`, `{servers: [...]}`… */
function rowsOf(body: unknown): Row[] | undefined {
  if (Array.isArray(body)) return body as Row[];
  if (body && typeof body === 'object') {
    for (const v of Object.values(body)) if (Array.isArray(v) && v.every((x) => x && typeof x === 'object')) return v as Row[];
  }
  return undefined;
}

function Fields(props: { body: Row }) {
  return (
    <dl>
      {Object.entries(props.body).map(([k, v]) => (
        <>
          <dt><strong>{k}</strong></dt>
          <dd>{show(v)}</dd>
        </>
      ))}
    </dl>
  );
}

/** A typed number as the API takes it: empty is null (unlimited), a number is a number, anything else goes as typed (and is refused beside its field). */
function numberOrNull(v: string | undefined): number | null | string {
  const t = (v ?? '').trim();
  if (t === '') return null;
  return /^-?\d+$/.test(t) ? Number(t) : t;
}
function numberOf(v: string | undefined): number | string {
  const n = numberOrNull(v);
  return n === null ? '' : n;
}
const enc = encodeURIComponent;
const WEBHOOKS_BACK = { href: '/staff/webhooks', text: 'Back to the webhooks' };

function Unavailable(props: { answer: ApiAnswer<unknown> }) {
  return <p class="notice error" role="alert">{props.answer.error?.message ?? 'Unavailable.'}</p>;
}

const SECTIONS: Section[] = [
  {
    slug: 'users',
    title: 'Users',
    async render(c, web, state) {
      const offset = offsetOf(c.req.query('offset'));
      const query = (c.req.query('query') ?? '').trim();
      const list = await web.api<{ users: Row[]; total: number }>(c, 'GET', `/api/v1/users?limit=${PAGE}&offset=${offset}${query ? `&query=${enc(query)}` : ''}`);
      if (!list.ok) return { body: <Unavailable answer={list} />, status: list.status };
      return {
        body: (
          <>
            <form method="get" action="/staff/users" role="search">
              <fieldset role="group">
                <input name="query" aria-label="Find a user by name or address" placeholder="Find by name or address" value={query} />
                <button type="submit" class="secondary">Find</button>
              </fieldset>
            </form>
            <RecordTable caption="Users" rows={list.body.users} columns={['username', 'email', 'role', 'disabled', 'email_verified', 'server_count', 'created_at']} link={(r) => `/staff/users/${show(r.id)}`} />
            <Pager base={`/staff/users${query ? `?query=${enc(query)}` : ''}`} offset={offset} limit={PAGE} total={list.body.total} shown={list.body.users.length} label="User pages" />
            <h2>Add an account</h2>
            <PostForm
              action="/staff/users/do/create"
              state={stateOf(state, 'create')}
              rows={[[
                { id: 'u-username', name: 'username', label: 'Username', required: true },
                { id: 'u-email', name: 'email', label: 'E-mail (optional, unverified)', type: 'email' },
                { kind: 'select', id: 'u-role', name: 'role', label: 'Role', options: ROLES },
              ]]}
              submit="Add"
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'fleet',
    title: 'Fleet',
    async render(c, web) {
      const fleet = await web.api<{ servers: Row[] }>(c, 'GET', '/api/v1/fleet');
      if (!fleet.ok) return { body: <Unavailable answer={fleet} />, status: fleet.status };
      return { body: <RecordTable caption="Fleet" rows={fleet.body.servers.map((s) => ({ ...s, retiring: s.retiring ? `since ${show((s.retiring as Row).requested_at)}${(s.retiring as Row).delete ? ', delete' : ''}` : '' }))} columns={['name', 'phase', 'owner', 'playersOnline', 'desiredState', 'image', 'retiring']} link={(r) => `/servers/${show(r.name)}`} /> };
    },
  },
  {
    slug: 'images',
    title: 'Images',
    async render(c, web, state) {
      const images = await web.api<{ images: Row[] }>(c, 'GET', '/api/v1/images');
      if (!images.ok) return { body: <Unavailable answer={images} />, status: images.status };
      return {
        body: (
          <>
            <ActionTable
              caption="Images"
              rows={images.body.images}
              empty="No image is whitelisted yet."
              columns={[['Image', (i) => show(i.image_ref)], ['Source', (i) => show(i.source)], ['Enabled', (i) => (i.enabled ? 'yes' : 'no')], ['Added', (i) => show(i.added_at)]]}
              actions={(i) => (
                <>
                  <ActionButton action="/staff/images/do/enable" fields={{ image_ref: show(i.image_ref), enabled: i.enabled ? 'false' : 'true' }} label={`${i.enabled ? 'Disable' : 'Enable'} ${show(i.image_ref)}`} secondary />
                  <ActionButton action="/staff/images/do/remove" fields={{ image_ref: show(i.image_ref) }} label={`Remove ${show(i.image_ref)}`} secondary />
                </>
              )}
            />
            <h2>Whitelist an image</h2>
            <PostForm action="/staff/images/do/add" state={stateOf(state, 'add')} rows={[{ id: 'img-ref', name: 'image_ref', label: 'Image reference', required: true, placeholder: 'itzg/minecraft-server:java21' }]} submit="Whitelist" />
          </>
        ),
      };
    },
  },
  {
    slug: 'builds',
    title: 'Builds',
    async render(c, web, state) {
      const offset = offsetOf(c.req.query('offset'));
      const list = await web.api<{ builds: Row[]; total: number }>(c, 'GET', `/api/v1/images/build?limit=${PAGE}&offset=${offset}`);
      if (!list.ok) return { body: <Unavailable answer={list} />, status: list.status };
      return {
        body: (
          <>
            <RecordTable caption="Builds" rows={list.body.builds} columns={['id', 'image_ref', 'status', 'requested_by', 'created_at', 'finished_at', 'error']} link={(r) => `/staff/builds/${show(r.id)}`} />
            <Pager base="/staff/builds" offset={offset} limit={PAGE} total={list.body.total} shown={list.body.builds.length} label="Build pages" />
            <h2>Start a build</h2>
            <PostForm
              action="/staff/builds/do/start"
              state={stateOf(state, 'start')}
              rows={[
                [
                  { id: 'b-image', name: 'image_ref', label: 'Image to build', required: true, placeholder: 'registry.felis.local/felis/paper:1.21' },
                  { id: 'b-base', name: 'base_image', label: 'Base image (optional)' },
                ],
                { id: 'b-context', name: 'context_ref', label: 'Approved submission’s context (optional)' },
                { kind: 'textarea', id: 'b-dockerfile', name: 'dockerfile', label: 'Dockerfile (unless a context names one)', rows: 6 },
              ]}
              submit="Start"
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'submissions',
    title: 'Submissions lane',
    async render(c, web, state) {
      const list = await web.api<{ submissions: Row[] }>(c, 'GET', '/api/v1/submissions');
      if (!list.ok) return { body: <Unavailable answer={list} />, status: list.status };
      return {
        body: (
          <ActionTable
            caption="Submissions"
            rows={list.body.submissions}
            empty="No submissions yet."
            columns={[
              ['Modpack', (s) => <>{show(s.display_name)}<br /><small>{`${show(s.submitted_by)} · ${show(s.created_at)}`}</small></>],
              ['Status', (s) => <>{show(s.status)}{s.reject_reason ? <><br /><small>{show(s.reject_reason)}</small></> : null}</>],
              ['Context', (s) => (s.context_sha256 ? <><a href={`/api/v1/submissions/${enc(show(s.id))}/context`} download>Download</a><br /><small>{`sha-256 ${show(s.context_sha256).slice(0, 12)}…`}</small></> : 'not uploaded')],
              ['Image and build', (s) => <>{show(s.image_ref)}{s.build_id ? <><br /><a href={`/staff/builds/${enc(show(s.build_id))}`}>{`build ${show(s.build_status)}`}</a></> : null}</>],
            ]}
            actions={(s) =>
              s.status === 'pending_review' ? (
                <>
                  <ActionButton action="/staff/submissions/do/approve" fields={{ id: show(s.id), expected_digest: show(s.context_sha256) }} label={`Approve ${show(s.display_name)}`} />
                  <PostForm
                    action="/staff/submissions/do/reject"
                    state={state?.values.id === show(s.id) ? stateOf(state, 'reject') : stateOf(undefined, 'reject')}
                    hidden={{ id: show(s.id) }}
                    rows={[{ id: `reason-${show(s.id)}`, name: 'reason', label: 'Reason to reject', required: true }]}
                    submit="Reject"
                    secondary
                  />
                </>
              ) : null
            }
          />
        ),
      };
    },
  },
  {
    slug: 'nodes',
    title: 'Nodes',
    async render(c, web) {
      const nodes = await web.api(c, 'GET', '/api/v1/nodes');
      if (!nodes.ok) return { body: <Unavailable answer={nodes} />, status: nodes.status };
      const rows = rowsOf(nodes.body) ?? [];
      return { body: <><RecordTable caption="Nodes" rows={rows} /><p><a href="/staff/node-tasks">Node tasks: approve, cordon, drain, return or remove a node</a></p></> };
    },
  },
  {
    slug: 'node-tasks',
    title: 'Node tasks',
    async render(c, web, state) {
      const control = await web.api<{ available: boolean; tasks: Row[] }>(c, 'GET', '/api/v1/settings/node-control');
      if (!control.ok) return { body: <Unavailable answer={control} />, status: control.status };
      return {
        body: (
          <>
            <p>{control.body.available ? 'This cluster allows node control (the owner only; a fresh proof of identity is asked).' : 'This cluster does not allow node control: a task is refused.'}</p>
            <ActionTable
              caption="Node tasks"
              rows={control.body.tasks}
              empty="No node task yet."
              columns={[
                ['Task', (t) => <a href={`/staff/node-tasks/${enc(show(t.id))}`}>{show((t.request as Row | undefined)?.action)}</a>],
                ['Node', (t) => show((t.request as Row | undefined)?.name)],
                ['State', (t) => `${show(t.state)} (${show(t.stage)})`],
                ['Started', (t) => show(t.startedAt)],
                ['Error', (t) => show(t.error)],
              ]}
              actions={(t) => (t.state === 'failed' ? <ActionButton action="/staff/node-tasks/do/retry" fields={{ id: show(t.id) }} label="Retry" secondary /> : null)}
            />
            <h2>Start a node task</h2>
            <PostForm
              action="/staff/node-tasks/do/start"
              state={stateOf(state, 'start')}
              rows={[
                [
                  { kind: 'select', id: 'nt-action', name: 'action', label: 'Action', options: ['approve', 'cordon', 'drain', 'return', 'remove'] },
                  { id: 'nt-name', name: 'name', label: 'Node name', required: true },
                ],
                [
                  { id: 'nt-ssh', name: 'sshTarget', label: 'SSH target (approve only)' },
                  { id: 'nt-ip', name: 'externalIP', label: 'External IP (approve only)' },
                ],
                { kind: 'check', id: 'nt-confirm', name: 'confirmMaintenance', label: 'I know the servers on this node stop or move' },
              ]}
              submit="Start the task"
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'backups',
    title: 'World backups',
    async render(c, web) {
      const list = await web.api<{ backups: Row[] }>(c, 'GET', '/api/v1/backups');
      if (!list.ok) return { body: <Unavailable answer={list} />, status: list.status };
      return {
        body: (
          <ActionTable
            caption="World backups"
            rows={list.body.backups}
            empty="No world backup yet."
            columns={['server_name', 'reason', 'status', 'size_bytes', 'created_at', 'expires_at', 'former_owner'].map((k) => [k, (b: Row) => show(b[k])] as [string, (b: Row) => Child])}
            actions={(b) => <ActionButton action="/staff/backups/do/delete" fields={{ id: show(b.id), what: `${show(b.server_name)} of ${show(b.created_at)}` }} label={`Delete the backup of ${show(b.server_name)} taken ${show(b.created_at)}`} secondary />}
          />
        ),
      };
    },
  },
  {
    slug: 'audit',
    title: 'Audit log',
    async render(c, web) {
      const offset = offsetOf(c.req.query('offset'));
      const filters = Object.fromEntries(['actor', 'server', 'action'].map((k) => [k, (c.req.query(k) ?? '').trim()]).filter(([, v]) => v !== ''));
      const qs = new URLSearchParams(filters).toString();
      const list = await web.api<{ entries: Row[]; total: number }>(c, 'GET', `/api/v1/audit?limit=${PAGE}&offset=${offset}${qs ? `&${qs}` : ''}`);
      const form = (
        <form method="get" action="/staff/audit">
          <div class="grid">
            <Input id="a-actor" name="actor" label="Actor (account id)" value={filters.actor} />
            <Input id="a-server" name="server" label="Server" value={filters.server} />
            <Input id="a-action" name="action" label="Action" value={filters.action} />
          </div>
          <button type="submit" class="secondary">Filter</button>
        </form>
      );
      if (!list.ok) return { body: <>{form}<Unavailable answer={list} /></>, status: list.status };
      return {
        body: (
          <>
            {form}
            <RecordTable caption="Audit log" rows={list.body.entries} columns={['at', 'action', 'actor_username', 'target', 'detail', 'request_id']} />
            <Pager base={`/staff/audit${qs ? `?${qs}` : ''}`} offset={offset} limit={PAGE} total={list.body.total} shown={list.body.entries.length} label="Audit log pages" />
          </>
        ),
      };
    },
  },
  {
    slug: 'webhooks',
    title: 'Webhooks',
    async render(c, web, state) {
      const list = await web.api<{ webhooks: Row[] }>(c, 'GET', '/api/v1/settings/webhooks');
      if (!list.ok) return { body: <Unavailable answer={list} />, status: list.status };
      return {
        body: (
          <>
            <ActionTable
              caption="Webhooks"
              rows={list.body.webhooks}
              empty="No webhook yet."
              columns={[
                ['Name', (w) => <a href={`/staff/webhooks/${enc(show(w.id))}`}>{show(w.name)}</a>],
                ['Address', (w) => <>{show(w.url)}<br /><small>{show(w.format)}</small></>],
                ['Events', (w) => <small>{(w.events as string[]).join(', ') || 'all'}</small>],
                ['Enabled', (w) => <>{w.enabled ? 'yes' : 'no'}{w.paused_until ? <><br /><small>{`paused until ${show(w.paused_until)}`}</small></> : null}</>],
              ]}
              actions={(w) => {
                const id = show(w.id);
                return (
                  <>
                    <ActionButton action="/staff/webhooks/do/enable" fields={{ id, enabled: w.enabled ? 'false' : 'true' }} label={`${w.enabled ? 'Disable' : 'Enable'} ${show(w.name)}`} secondary />
                    <ActionButton action="/staff/webhooks/do/test" fields={{ id }} label={`Test ${show(w.name)}`} secondary />
                    <ActionButton action="/staff/webhooks/do/rotate" fields={{ id }} label={`New secret for ${show(w.name)}`} secondary />
                    <ActionButton action="/staff/webhooks/do/delete" fields={{ id }} label={`Delete ${show(w.name)}`} secondary />
                  </>
                );
              }}
            />
            <h2>Add a webhook</h2>
            <PostForm
              action="/staff/webhooks/do/add"
              state={stateOf(state, 'add')}
              rows={[
                [
                  { id: 'wh-name', name: 'name', label: 'Name', required: true },
                  { id: 'wh-url', name: 'url', label: 'Address (https)', type: 'url', required: true },
                  { kind: 'select', id: 'wh-format', name: 'format', label: 'Format', options: ['json', 'discord'] },
                ],
                { legend: 'Events (none ticked: all)', fields: WEBHOOK_EVENTS.map((e) => ({ kind: 'check' as const, id: `wh-ev-${e.replace(/\./g, '-')}`, name: `event:${e}`, label: e })) },
              ]}
              submit="Add"
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'entry-policy',
    title: 'Lobby and entry policy',
    async render(c, web, state) {
      const policy = await web.api<Row>(c, 'GET', '/api/v1/settings/entry-policy');
      if (!policy.ok) return { body: <Unavailable answer={policy} />, status: policy.status };
      const p = policy.body;
      const f = stateOf(state, 'save');
      return {
        body: (
          <PostForm
            action="/staff/entry-policy/do/save"
            state={f}
            hidden={{ revision: f.refused ? (f.values.revision ?? '') : show(p.revision) }}
            rows={[
              [
                { kind: 'select', id: 'ep-mode', name: 'mode', label: 'How players enter', options: [['lobby', 'the lobby'], ['direct', 'straight to a server'], ['domain', 'by the server’s domain']], value: show(p.mode) },
                { id: 'ep-default', name: 'defaultServer', label: 'Default server (direct)', value: show(p.defaultServer) },
              ],
              [
                { kind: 'select', id: 'ep-offline', name: 'offlineAction', label: 'When the server is offline', options: ['wake', 'fallback', 'disconnect'], value: show(p.offlineAction) },
                { kind: 'select', id: 'ep-waiting', name: 'waitingSpace', label: 'Where they wait', options: ['login', 'lobby'], value: show(p.waitingSpace) },
                { id: 'ep-fallback', name: 'fallbackServer', label: 'Fallback server', value: show(p.fallbackServer) },
              ],
              { kind: 'check', id: 'ep-link', name: 'requireAccountLink', label: 'Players must link an account first', checked: p.requireAccountLink === true },
            ]}
            submit="Save"
          />
        ),
      };
    },
  },
  {
    slug: 'wake-policy',
    title: 'Wake policy',
    async render(c, web, state) {
      const policy = await web.api<Row>(c, 'GET', '/api/v1/settings/wake-policy');
      if (!policy.ok) return { body: <Unavailable answer={policy} />, status: policy.status };
      const p = policy.body;
      const f = stateOf(state, 'save');
      return {
        body: (
          <>
            {p.managed ? <p>These values are set by the deployment's settings; a save here is refused.</p> : null}
            <PostForm
              action="/staff/wake-policy/do/save"
              state={f}
              hidden={{ revision: f.refused ? (f.values.revision ?? '') : show(p.revision) }}
              rows={[[
                { id: 'wp-max', name: 'maxRunningServers', label: 'Running servers a node may hold (0: no cap)', type: 'number', min: '0', value: show(p.maxRunningServers) },
                { id: 'wp-cooldown', name: 'wakeCooldownSeconds', label: 'Seconds between wakes of a server', type: 'number', min: '0', value: show(p.wakeCooldownSeconds) },
              ]]}
              submit="Save"
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'session-sources',
    title: 'Session sources',
    async render(c, web, state) {
      const sources = await web.api<{ sources: Row[]; revision: string; managed: boolean }>(c, 'GET', '/api/v1/settings/auth-sources');
      if (!sources.ok) return { body: <Unavailable answer={sources} />, status: sources.status };
      const f = stateOf(state, 'save');
      // One row a source, and an empty one to add; a refused save shows what was typed.
      const count = f.refused ? Number(f.values.count ?? 0) : sources.body.sources.length + 1;
      const row = (i: number): FieldSpec[][] => {
        const at = (k: string) => show(sources.body.sources[i]?.[k]);
        return [
          [{ id: `ss-tag-${i}`, name: `tag.${i}`, label: 'Tag', value: at('tag') }, { id: `ss-prefix-${i}`, name: `prefix.${i}`, label: 'Name prefix', value: at('prefix') }],
          [{ id: `ss-url-${i}`, name: `url.${i}`, label: 'Session address', value: at('url') }, { id: `ss-api-${i}`, name: `api_url.${i}`, label: 'Profile API address (optional)', value: at('api_url') }],
          [
            { kind: 'check', id: `ss-enabled-${i}`, name: `enabled.${i}`, label: 'Enabled', checked: sources.body.sources[i]?.enabled !== false },
            ...(i < sources.body.sources.length ? [{ kind: 'check' as const, id: `ss-remove-${i}`, name: `remove.${i}`, label: 'Remove this source' }] : []),
          ],
        ];
      };
      return {
        body: (
          <>
            <p>The sources a login asks after the primary one, in this order.{sources.body.managed ? ' They are set by the deployment; a save here is refused.' : ''}</p>
            <PostForm
              action="/staff/session-sources/do/save"
              // A 400 names a row's field as `sources.<i>.<field>`: shown beside the form's `<field>.<i>`.
              state={{ ...f, errors: Object.fromEntries(Object.entries(f.errors).map(([k, v]) => [k.replace(/^sources\.(\d+)\.(.+)$/, '$2.$1'), v])) }}
              hidden={{ revision: f.refused ? (f.values.revision ?? '') : sources.body.revision, count: String(count) }}
              rows={Array.from({ length: count }, (_, i) => ({ legend: i < sources.body.sources.length ? `Source ${i + 1}` : 'Add a source (leave empty for none)', fields: row(i).flat() }))}
              submit="Save the sources"
            />
            <h2>Test a source</h2>
            <PostForm
              action="/staff/session-sources/do/test"
              state={stateOf(state, 'test')}
              rows={[
                [
                  { id: 'st-tag', name: 'tag', label: 'Tag', required: true },
                  { id: 'st-prefix', name: 'prefix', label: 'Name prefix', required: true },
                ],
                [
                  { id: 'st-url', name: 'url', label: 'Session address', required: true },
                  { id: 'st-api', name: 'api_url', label: 'Profile API address (optional)' },
                ],
              ]}
              submit="Test"
              secondary
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'updates',
    title: 'Updates',
    async render(c, web, state) {
      const [report, window] = await Promise.all([web.api<{ report: Row | null; stale: boolean }>(c, 'GET', '/api/v1/updates/report'), web.api<{ start: string | null; end: string | null }>(c, 'GET', '/api/v1/updates/window')]);
      if (!report.ok) return { body: <Unavailable answer={report} />, status: report.status };
      const r = report.body.report;
      return {
        body: (
          <>
            <h2>Newest check</h2>
            {r ? (
              <>
                <p>{`Checked ${show(r.checked_at)}${report.body.stale ? ' (stale: older than 26 hours)' : ''}.`}</p>
                <RecordTable caption="Components" rows={(r.components as Row[]) ?? []} columns={['name', 'state', 'current', 'latest', 'selector', 'note', 'error']} />
              </>
            ) : <p>No update check is recorded yet.</p>}
            <h2>Maintenance window (UTC)</h2>
            <p>Automatic updates apply only inside it; clear both ends for none.</p>
            <PostForm
              action="/staff/updates/do/window"
              state={stateOf(state, 'window')}
              rows={[[
                { id: 'uw-start', name: 'start', label: 'Start (UTC)', type: 'datetime-local', value: localOf(window.ok ? window.body.start : null) },
                { id: 'uw-end', name: 'end', label: 'End (UTC)', type: 'datetime-local', value: localOf(window.ok ? window.body.end : null) },
              ]]}
              submit="Save the window"
            />
          </>
        ),
      };
    },
  },
  {
    slug: 'db-backup',
    title: 'Database backup',
    async render(c, web) {
      const status = await web.api<{ last: Row | null; stale: boolean }>(c, 'GET', '/api/v1/platform/db-backup');
      if (!status.ok) return { body: <Unavailable answer={status} />, status: status.status };
      return {
        body: (
          <>
            {status.body.last ? <Fields body={status.body.last} /> : <p>No database backup is recorded yet.</p>}
            {status.body.stale ? <p class="notice error" role="status">The newest backup is older than 26 hours (or there is none).</p> : null}
            <p>Bundles are made by <code>npm run db:backup</code> (or the nightly CronJob in a cluster), which records them here; the API takes no backup itself.</p>
          </>
        ),
      };
    },
  },
];

/** The forms of each staff page, by page and form. */
const FORMS: Record<string, Record<string, StaffForm>> = {
  users: {
    create: {
      call: (f) => ({ method: 'POST', path: '/api/v1/users', body: { username: (f.username ?? '').trim(), ...(f.email?.trim() ? { email: f.email.trim() } : {}), role: f.role || 'user' } }),
      fields: ['username', 'email', 'role'],
      byCode: { conflict: 'username' },
      done: (f) => `Added ${f.username}.`,
      to: (_f, b) => `/staff/users/${enc(show(b.id))}`,
    },
  },
  user: {
    quotas: {
      call: (f) => ({ method: 'PUT', path: `/api/v1/users/${enc(f.user_id ?? '')}/quotas`, body: { max_servers: numberOrNull(f.max_servers), max_cpu_milli: numberOrNull(f.max_cpu_milli), max_memory_mb: numberOrNull(f.max_memory_mb), max_storage_gb: numberOrNull(f.max_storage_gb) } }),
      fields: ['max_servers', 'max_cpu_milli', 'max_memory_mb', 'max_storage_gb'],
      done: () => 'Quota saved.',
      to: (f) => `/staff/users/${enc(f.user_id ?? '')}`,
    },
    disable: {
      call: (f) => ({ method: 'POST', path: `/api/v1/users/${enc(f.user_id ?? '')}/disable`, body: { disabled: f.disabled === 'true' } }),
      fields: [],
      done: (f) => (f.disabled === 'true' ? 'Disabled; every session is revoked.' : 'Enabled.'),
      to: (f) => `/staff/users/${enc(f.user_id ?? '')}`,
    },
    'sign-out': {
      call: (f) => ({ method: 'DELETE', path: `/api/v1/users/${enc(f.user_id ?? '')}/sessions` }),
      fields: [],
      done: () => 'Signed out everywhere.',
      to: (f) => `/staff/users/${enc(f.user_id ?? '')}`,
    },
    edit: {
      // An emptied address removes it (null); a new one is unverified until its holder types back a code.
      call: (f) => ({ method: 'PATCH', path: `/api/v1/users/${enc(f.user_id ?? '')}`, body: { username: (f.username ?? '').trim(), email: (f.email ?? '').trim() || null, role: f.role } }),
      fields: ['username', 'email', 'role'],
      byCode: { protected_admin: 'role' },
      done: () => 'Saved.',
      to: (f) => `/staff/users/${enc(f.user_id ?? '')}`,
    },
    delete: { call: (f) => ({ method: 'DELETE', path: `/api/v1/users/${enc(f.user_id ?? '')}` }), fields: [], done: (f) => `Deleted ${f.username ?? 'the account'}; its sessions and keys are revoked.`, to: () => '/staff/users' },
    passkeys: { call: (f) => ({ method: 'DELETE', path: `/api/v1/users/${enc(f.user_id ?? '')}/passkeys` }), fields: [], done: () => 'Every passkey of the account is removed; its sessions stay.', to: (f) => `/staff/users/${enc(f.user_id ?? '')}` },
    link: {
      call: (f) => ({ method: 'POST', path: `/api/v1/users/${enc(f.user_id ?? '')}/links`, body: { mc_uuid: (f.mc_uuid ?? '').trim(), auth_source: (f.auth_source ?? '').trim() } }),
      fields: ['mc_uuid', 'auth_source'],
      byCode: { conflict: 'mc_uuid' },
      done: (f) => `Linked ${(f.mc_uuid ?? '').trim()}.`,
      to: (f) => `/staff/users/${enc(f.user_id ?? '')}`,
    },
    unlink: { call: (f) => ({ method: 'DELETE', path: `/api/v1/users/${enc(f.user_id ?? '')}/links/${enc(f.mc_uuid ?? '')}` }), fields: [], done: (f) => `Unlinked ${f.mc_uuid ?? ''}.`, to: (f) => `/staff/users/${enc(f.user_id ?? '')}` },
  },
  backups: {
    delete: { call: (f) => ({ method: 'DELETE', path: `/api/v1/backups/${enc(f.id ?? '')}` }), fields: [], done: (f) => `Deleted the backup of ${f.what ?? ''}.` },
  },
  images: {
    add: { call: (f) => ({ method: 'POST', path: '/api/v1/images', body: { image_ref: (f.image_ref ?? '').trim() } }), fields: ['image_ref'], byCode: { conflict: 'image_ref', image_not_in_registry: 'image_ref', registry_unavailable: 'image_ref', bad_request: 'image_ref' }, done: (f) => `Whitelisted ${f.image_ref}.` },
    enable: { call: (f) => ({ method: 'PATCH', path: `/api/v1/images/${enc(f.image_ref ?? '')}`, body: { enabled: f.enabled === 'true' } }), fields: [], done: (f) => `${f.enabled === 'true' ? 'Enabled' : 'Disabled'} ${f.image_ref}.` },
    remove: { call: (f) => ({ method: 'DELETE', path: `/api/v1/images?ref=${enc(f.image_ref ?? '')}` }), fields: [], done: (f) => `Removed ${f.image_ref}.` },
  },
  builds: {
    start: {
      call: (f) => ({ method: 'POST', path: '/api/v1/images/build', body: { image_ref: (f.image_ref ?? '').trim(), ...Object.fromEntries(['dockerfile', 'context_ref', 'base_image'].filter((k) => (f[k] ?? '').trim() !== '').map((k) => [k, k === 'dockerfile' ? f[k]!.replace(/\r\n/g, '\n') : f[k]!.trim()])) } }),
      fields: ['image_ref', 'dockerfile', 'context_ref', 'base_image'],
      done: () => 'Build started.',
      to: (_f, b) => `/staff/builds/${enc(show(b.id))}`,
    },
    cancel: { call: (f) => ({ method: 'POST', path: `/api/v1/images/build/${enc(f.id ?? '')}/cancel` }), fields: [], done: () => 'Cancelled.', to: (f) => `/staff/builds/${enc(f.id ?? '')}` },
  },
  submissions: {
    approve: { call: (f) => ({ method: 'POST', path: `/api/v1/submissions/${enc(f.id ?? '')}/approve`, body: { expected_digest: f.expected_digest ?? '' } }), fields: [], done: () => 'Approved: its build starts.' },
    reject: { call: (f) => ({ method: 'POST', path: `/api/v1/submissions/${enc(f.id ?? '')}/reject`, body: { reason: (f.reason ?? '').trim() } }), fields: ['reason'], done: () => 'Rejected.' },
  },
  'node-tasks': {
    start: {
      call: (f) => ({
        method: 'POST',
        path: '/api/v1/settings/node-control/tasks',
        body: { action: f.action, name: (f.name ?? '').trim(), ...(f.sshTarget?.trim() ? { sshTarget: f.sshTarget.trim() } : {}), ...(f.externalIP?.trim() ? { externalIP: f.externalIP.trim() } : {}), confirmMaintenance: on(f.confirmMaintenance) },
      }),
      fields: ['action', 'name', 'sshTarget', 'externalIP', 'confirmMaintenance'],
      byCode: { bad_node: 'name' },
      done: () => 'Node task started.',
      to: (_f, b) => `/staff/node-tasks/${enc(show(b.id))}`,
    },
    retry: { call: (f) => ({ method: 'POST', path: `/api/v1/settings/node-control/tasks/${enc(f.id ?? '')}/retry` }), fields: [], done: () => 'Started again.', to: (_f, b) => `/staff/node-tasks/${enc(show(b.id))}` },
  },
  webhooks: {
    add: {
      call: (f) => {
        const events = WEBHOOK_EVENTS.filter((e) => on(f[`event:${e}`]));
        return { method: 'POST', path: '/api/v1/settings/webhooks', body: { name: (f.name ?? '').trim(), url: (f.url ?? '').trim(), format: f.format || 'json', ...(events.length ? { events } : {}) } };
      },
      fields: ['name', 'url', 'format', 'events'],
      done: (f) => `Added ${f.name}.`,
      shown: (b) => <SecretOnce secret={show(b.secret)} what={`The webhook ${show(b.name)} is added`} label="Signing secret" back={WEBHOOKS_BACK} />,
    },
    enable: { call: (f) => ({ method: 'PATCH', path: `/api/v1/settings/webhooks/${enc(f.id ?? '')}`, body: { enabled: f.enabled === 'true' } }), fields: [], done: (f) => (f.enabled === 'true' ? 'Enabled.' : 'Disabled.') },
    rotate: { call: (f) => ({ method: 'PATCH', path: `/api/v1/settings/webhooks/${enc(f.id ?? '')}`, body: { rotate_secret: true } }), fields: [], done: () => 'New secret.', shown: (b) => <SecretOnce secret={show(b.secret)} what={`The webhook ${show(b.name)} has a new secret`} label="Signing secret" back={WEBHOOKS_BACK} /> },
    test: { call: (f) => ({ method: 'POST', path: `/api/v1/settings/webhooks/${enc(f.id ?? '')}/test` }), fields: [], done: () => 'A test delivery is queued.' },
    delete: { call: (f) => ({ method: 'DELETE', path: `/api/v1/settings/webhooks/${enc(f.id ?? '')}` }), fields: [], done: () => 'Deleted.' },
  },
  'entry-policy': {
    save: {
      call: (f) => ({
        method: 'PUT',
        path: '/api/v1/settings/entry-policy',
        body: { mode: f.mode, ...(f.defaultServer?.trim() ? { defaultServer: f.defaultServer.trim() } : {}), requireAccountLink: on(f.requireAccountLink), offlineAction: f.offlineAction, waitingSpace: f.waitingSpace, ...(f.fallbackServer?.trim() ? { fallbackServer: f.fallbackServer.trim() } : {}), revision: f.revision ?? '' },
      }),
      fields: ['mode', 'defaultServer', 'requireAccountLink', 'offlineAction', 'waitingSpace', 'fallbackServer'],
      done: () => 'Entry policy saved.',
    },
  },
  'wake-policy': {
    save: { call: (f) => ({ method: 'PUT', path: '/api/v1/settings/wake-policy', body: { maxRunningServers: numberOf(f.maxRunningServers), wakeCooldownSeconds: numberOf(f.wakeCooldownSeconds), revision: f.revision ?? '' } }), fields: ['maxRunningServers', 'wakeCooldownSeconds'], done: () => 'Wake policy saved.' },
  },
  'session-sources': {
    save: {
      call: (f) => {
        const sources = [];
        for (let i = 0; i < Number(f.count ?? 0); i++) {
          if (on(f[`remove.${i}`])) continue;
          const tag = (f[`tag.${i}`] ?? '').trim();
          const url = (f[`url.${i}`] ?? '').trim();
          const prefix = (f[`prefix.${i}`] ?? '').trim();
          if (!tag && !url && !prefix) continue;
          const api = (f[`api_url.${i}`] ?? '').trim();
          sources.push({ tag, prefix, url, ...(api ? { api_url: api } : {}), enabled: on(f[`enabled.${i}`]) });
        }
        return { method: 'PUT', path: '/api/v1/settings/auth-sources', body: { sources, revision: f.revision ?? '' } };
      },
      // `json sources.0.url: …` names a row's field; the form's own names are `url.0`.
      fields: [],
      done: () => 'Session sources saved.',
    },
    test: {
      call: (f) => ({ method: 'POST', path: '/api/v1/settings/auth-sources/test', body: { tag: (f.tag ?? '').trim(), prefix: (f.prefix ?? '').trim(), url: (f.url ?? '').trim(), ...(f.api_url?.trim() ? { api_url: f.api_url.trim() } : {}) } }),
      fields: ['tag', 'prefix', 'url', 'api_url'],
      byCode: { auth_source_unavailable: 'url' },
      done: (_f, b) => `The source answered ${show(b.status)} in ${show(b.elapsed_ms)} ms${b.ok ? '' : ': not healthy'}.`,
    },
  },
  updates: {
    window: { call: (f) => ({ method: 'PUT', path: '/api/v1/updates/window', body: { start: utcOrNull(f.start), end: utcOrNull(f.end) } }), fields: ['start', 'end'], done: () => 'Maintenance window saved.' },
  },
};

/** The field a row-shaped refusal names: `json sources.1.url: …` is the form's `sources.1.url`. */
function rowField(message: string | undefined): string | undefined {
  return /^json (sources\.\d+\.[a-z_]+)/.exec(message ?? '')?.[1];
}

export function staffPages(app: Hono<AppEnv>, web: Web): void {
  app.get('/staff', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    return web.render(
      c,
      { title: 'Staff', viewer, notice: viewer.is_admin ? noticeOf(c) : { text: 'Staff pages are on the operator console, for staff.', error: true } },
      <>
        <ul>
          {SECTIONS.map((s) => <li><a href={`/staff/${s.slug}`}>{s.title}</a></li>)}
        </ul>
        <p>A server's members are on its own page (the Members tab); API keys on each account's own page.</p>
      </>,
      viewer.is_admin ? 200 : 403,
    );
  });

  const userPage = async (c: Context<AppEnv>, id: string, state?: FormState) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const path = enc(id);
    const [user, quotas, sessions, sources] = await Promise.all([
      web.api(c, 'GET', `/api/v1/users/${path}`),
      web.api<Row>(c, 'GET', `/api/v1/users/${path}/quotas`),
      web.api(c, 'GET', `/api/v1/users/${path}/sessions`),
      web.api<{ sources: Array<{ tag: string }> }>(c, 'GET', '/api/v1/account/link/sources'),
    ]);
    if (!user.ok) return web.render(c, { title: 'User', viewer, notice: { text: user.error?.message ?? 'Refused.', error: true } }, <p><a href="/staff/users">Users</a></p>, user.status);
    const u = user.body;
    const hidden = { user_id: id };
    const links = (u.linked_accounts as Row[] | undefined) ?? [];
    const tags = sources.ok ? sources.body.sources.map((x) => x.tag) : [];
    const named = state ? FORMS.user?.[state.form]?.fields ?? [] : [];
    return web.render(
      c,
      // A one-button form has no field to show its refusal beside: the page says it.
      { title: `User ${show(u.username)}`, viewer, notice: state ? (state.errors._ && named.length === 0 ? { text: state.errors._, error: true } : undefined) : noticeOf(c) },
      <>
        <Fields body={Object.fromEntries(Object.entries(u).filter(([, v]) => !Array.isArray(v)))} />
        <div class="actions" role="group" aria-label="Account">
          <ActionButton action="/staff/user/do/disable" fields={{ ...hidden, disabled: u.disabled ? 'false' : 'true' }} label={u.disabled ? 'Enable' : 'Disable'} secondary />
          <ActionButton action="/staff/user/do/sign-out" fields={hidden} label="Sign out everywhere" secondary />
          <ActionButton action="/staff/user/do/passkeys" fields={hidden} label="Remove every passkey" secondary />
          {u.deleted_at ? null : <ActionButton action="/staff/user/do/delete" fields={{ ...hidden, username: show(u.username) }} label={`Delete ${show(u.username)}`} secondary />}
        </div>
        <h2>Name, address and role</h2>
        <PostForm
          action="/staff/user/do/edit"
          state={stateOf(state, 'edit')}
          hidden={hidden}
          rows={[[
            { id: 'ue-username', name: 'username', label: 'Username', required: true, value: show(u.username) },
            { id: 'ue-email', name: 'email', label: 'E-mail (empty: none; a new one is unverified)', type: 'email', value: show(u.email) },
            { kind: 'select', id: 'ue-role', name: 'role', label: 'Role', options: ROLES, value: show(u.role) },
          ]]}
          submit="Save"
        />
        <h2>Quotas</h2>
        {quotas.ok ? null : <p>{quotas.error?.message}</p>}
        <p><small>Empty is unlimited.</small></p>
        <PostForm
          action="/staff/user/do/quotas"
          state={stateOf(state, 'quotas')}
          hidden={hidden}
          rows={[[
            { id: 'q-servers', name: 'max_servers', label: 'Servers', value: show(quotas.ok ? quotas.body.max_servers : '') },
            { id: 'q-cpu', name: 'max_cpu_milli', label: 'CPU (millicores)', value: show(quotas.ok ? quotas.body.max_cpu_milli : '') },
            { id: 'q-memory', name: 'max_memory_mb', label: 'Memory (MB)', value: show(quotas.ok ? quotas.body.max_memory_mb : '') },
            { id: 'q-storage', name: 'max_storage_gb', label: 'Storage (GB)', value: show(quotas.ok ? quotas.body.max_storage_gb : '') },
          ]]}
          submit="Save the quota"
        />
        <h2>Linked identities</h2>
        <ActionTable
          caption="Linked identities"
          rows={links}
          empty="No game identity is linked."
          columns={[['Player UUID', (l) => show(l.mc_uuid)], ['Source', (l) => show(l.auth_source)], ['Verified', (l) => show(l.verified_at)]]}
          actions={(l) => <ActionButton action="/staff/user/do/unlink" fields={{ ...hidden, mc_uuid: show(l.mc_uuid) }} label={`Unlink ${show(l.mc_uuid)}`} secondary />}
        />
        <h3>Link an identity by hand (the owner only)</h3>
        <PostForm
          action="/staff/user/do/link"
          state={stateOf(state, 'link')}
          hidden={hidden}
          rows={[[
            { id: 'ul-uuid', name: 'mc_uuid', label: 'Player UUID', required: true, placeholder: '069a79f4-44e9-4726-a5be-fca90e38aaf5' },
            tags.length > 0 ? { kind: 'select', id: 'ul-source', name: 'auth_source', label: 'Source', options: tags } : { id: 'ul-source', name: 'auth_source', label: 'Source', required: true, placeholder: 'mojang' },
          ]]}
          submit="Link"
          secondary
        />
        <h2>Sessions</h2>
        <RecordTable caption="Sessions" rows={rowsOf(sessions.body) ?? []} columns={['created_at', 'last_seen_at', 'expires_at', 'user_agent', 'client_ip']} />
      </>,
      state?.status ?? 200,
    );
  };
  app.get('/staff/users/:id', (c) => userPage(c, c.req.param('id')));

  const buildPage = async (c: Context<AppEnv>, id: string) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const [build, scan] = await Promise.all([web.api<Row>(c, 'GET', `/api/v1/images/build/${enc(id)}`), web.api<Row>(c, 'GET', `/api/v1/images/build/${enc(id)}/scan`)]);
    if (!build.ok) return web.render(c, { title: 'Build', viewer, notice: { text: build.error?.message ?? 'Refused.', error: true } }, <p><a href="/staff/builds">Builds</a></p>, build.status);
    const b = build.body;
    const terminal = ['succeeded', 'failed', 'cancelled'].includes(show(b.status));
    const summary = scan.ok ? (scan.body.summary as Row) : undefined;
    return web.render(
      c,
      { title: `Build of ${show(b.image_ref)}`, viewer, notice: noticeOf(c), scripts: ['buildlog.js'] },
      <>
        <p>{'Status: '}<strong id="build-status">{show(b.status)}</strong>{` · requested by ${show(b.requested_by)} at ${show(b.created_at)}${b.finished_at ? ` · finished ${show(b.finished_at)}` : ''}`}</p>
        {b.error ? <p class="notice error" role="status">{show(b.error)}</p> : null}
        {terminal ? null : <ActionButton action="/staff/builds/do/cancel" fields={{ id }} label="Cancel the build" secondary />}
        <h2>Log</h2>
        <pre class="console" id="build-log" data-stream={`/api/v1/images/build/${enc(id)}/logs`} data-build={id} tabindex={0} aria-label="Build log" aria-live="polite" />
        <p id="build-log-status" role="status">{terminal ? 'The build has ended; its whole log is above.' : 'Following the log…'}</p>
        <h2>Scan</h2>
        {summary ? (
          <>
            <p>{`${summary.blocked ? 'Blocked: the image was not pushed.' : 'Passed the gate.'} ${show(summary.packages)} packages. Findings: ${SEVERITIES.map((s) => `${s} ${show((summary.counts as Row)[s] ?? 0)}`).join(', ')}.`}</p>
            <RecordTable caption="Scan findings" rows={(summary.findings as Row[]) ?? []} columns={['id', 'kind', 'severity', 'package', 'installed', 'fixed', 'blocking']} />
            <p>
              {scan.body.has_report ? <a href={`/api/v1/images/build/${enc(id)}/scan/report`} download>Full report</a> : null}
              {scan.body.has_report && scan.body.has_sbom ? ' · ' : null}
              {scan.body.has_sbom ? <a href={`/api/v1/images/build/${enc(id)}/sbom`} download>SBOM</a> : null}
            </p>
          </>
        ) : <p>Not scanned (yet).</p>}
        {b.dockerfile ? <><h2>Dockerfile</h2><pre tabindex={0} aria-label="Dockerfile">{show(b.dockerfile)}</pre></> : null}
        <p><a href="/staff/builds">All builds</a></p>
      </>,
    );
  };
  app.get('/staff/builds/:id', (c) => buildPage(c, c.req.param('id')));

  app.get('/staff/webhooks/:id', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const id = c.req.param('id');
    const offset = offsetOf(c.req.query('offset'));
    const [hooks, deliveries] = await Promise.all([
      web.api<{ webhooks: Row[] }>(c, 'GET', '/api/v1/settings/webhooks'),
      web.api<{ deliveries: Row[]; total: number }>(c, 'GET', `/api/v1/settings/webhooks/${enc(id)}/deliveries?limit=${PAGE}&offset=${offset}`),
    ]);
    const hook = hooks.ok ? hooks.body.webhooks.find((w) => w.id === id) : undefined;
    if (!deliveries.ok) return web.render(c, { title: 'Webhook', viewer, notice: { text: deliveries.error?.message ?? 'Refused.', error: true } }, <p><a href="/staff/webhooks">Webhooks</a></p>, deliveries.status);
    return web.render(
      c,
      { title: `Deliveries of ${show(hook?.name ?? id)}`, viewer, notice: noticeOf(c) },
      <>
        {hook ? <p>{`${show(hook.url)} · ${hook.enabled ? 'enabled' : 'disabled'}${hook.paused_until ? ` · paused until ${show(hook.paused_until)}` : ''}`}</p> : null}
        <ActionTable
          caption="Deliveries"
          rows={deliveries.body.deliveries}
          empty="Nothing was sent to this webhook yet."
          columns={['event_type', 'status', 'attempts', 'last_status', 'last_error', 'created_at', 'last_attempt_at', 'next_attempt_at', 'delivered_at'].map((k) => [k, (d: Row) => show(d[k])] as [string, (d: Row) => Child])}
        />
        <Pager base={`/staff/webhooks/${enc(id)}`} offset={offset} limit={PAGE} total={deliveries.body.total} shown={deliveries.body.deliveries.length} label="Delivery pages" />
        <p><a href="/staff/webhooks">All webhooks</a></p>
      </>,
    );
  });

  app.get('/staff/node-tasks/:id', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const task = await web.api<Row>(c, 'GET', `/api/v1/settings/node-control/tasks/${enc(c.req.param('id'))}`);
    if (!task.ok) return web.render(c, { title: 'Node task', viewer, notice: { text: task.error?.message ?? 'Refused.', error: true } }, <p><a href="/staff/node-tasks">Node tasks</a></p>, task.status);
    const t = task.body;
    return web.render(
      c,
      { title: `Node task: ${show((t.request as Row).action)} ${show((t.request as Row).name)}`, viewer, notice: noticeOf(c) },
      <>
        <Fields body={Object.fromEntries(Object.entries(t).filter(([k]) => k !== 'log' && k !== 'request'))} />
        <h2>Log</h2>
        <pre class="console" tabindex={0} aria-label="Task log">{show(t.log)}</pre>
        {t.state === 'failed' ? <ActionButton action="/staff/node-tasks/do/retry" fields={{ id: show(t.id) }} label="Retry" /> : null}
        <p><a href="/staff/node-tasks">All node tasks</a></p>
      </>,
    );
  });

  const sectionPage = async (c: Context<AppEnv>, section: Section, state?: FormState) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const out = await section.render(c, web, state);
    return web.render(
      c,
      // A row's one-button form has no fields of its own to show its refusal beside: the page says it.
      { title: section.title, viewer, notice: state ? (state.errors._ && FORMS[section.slug]?.[state.form]?.fields.length === 0 ? { text: state.errors._, error: true } : undefined) : noticeOf(c), scripts: out.scripts },
      <>
        {out.body}
        <p><a href="/staff">Staff pages</a></p>
      </>,
      state?.status ?? out.status ?? 200,
    );
  };

  app.post('/staff/:section/do/:form', async (c) => {
    const slug = c.req.param('section');
    const what = c.req.param('form');
    const form = FORMS[slug]?.[what];
    if (!form) return c.notFound();
    const values = await web.form(c);
    const call = form.call(values, c);
    const answer = await web.api<Row>(c, call.method, call.path, call.body);
    if (answer.ok) {
      if (form.shown) {
        const viewer = await web.viewer(c);
        if (viewer instanceof Response) return viewer;
        return web.render(c, { title: SECTIONS.find((s) => s.slug === slug)?.title ?? 'Staff', viewer, scripts: ['copy.js'] }, form.shown(answer.body), answer.status);
      }
      return web.back(c, form.to?.(values, answer.body) ?? `/staff/${slug}`, { done: form.done(values, answer.body) });
    }
    const state = refused(what, values, answer, form.fields, form.byCode);
    const row = rowField(answer.error?.message);
    if (row) state.errors = { [row]: answer.error?.message ?? 'Refused.' };
    if (slug === 'user') return userPage(c, values.user_id ?? '', state);
    if (slug === 'builds' && what === 'cancel') return web.back(c, `/staff/builds/${enc(values.id ?? '')}`, { error: answer.error?.message ?? 'Refused.' });
    const section = SECTIONS.find((s) => s.slug === slug);
    if (!section) return c.notFound();
    return sectionPage(c, section, state);
  });

  app.get('/staff/:section', async (c) => {
    const section = SECTIONS.find((s) => s.slug === c.req.param('section'));
    if (!section) return c.notFound();
    return sectionPage(c, section);
  });
}
