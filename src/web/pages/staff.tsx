import type { Hono } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { noticeOf, type Web } from '../index.js';
import { RecordTable, show } from '../layout.js';

/**
 * The staff pages of the operator console, each one read of the API shown as a table (or the
 * setting's fields). Members and API keys come with the members issue: their rows go here.
 */
const SECTIONS: Array<{ slug: string; title: string; path: string; link?: (r: Record<string, unknown>) => string | undefined; download?: boolean }> = [
  { slug: 'users', title: 'Users', path: '/api/v1/users', link: (r) => `/staff/users/${show(r.id)}` },
  { slug: 'fleet', title: 'Fleet', path: '/api/v1/fleet', link: (r) => `/servers/${show(r.name)}` },
  { slug: 'images', title: 'Images', path: '/api/v1/images' },
  { slug: 'builds', title: 'Builds', path: '/api/v1/images/build' },
  { slug: 'submissions', title: 'Submissions lane', path: '/api/v1/submissions' },
  { slug: 'nodes', title: 'Nodes', path: '/api/v1/nodes' },
  { slug: 'node-tasks', title: 'Node tasks', path: '/api/v1/settings/node-control' },
  { slug: 'backups', title: 'World backups', path: '/api/v1/backups' },
  { slug: 'audit', title: 'Audit log', path: '/api/v1/audit' },
  { slug: 'webhooks', title: 'Webhooks', path: '/api/v1/settings/webhooks' },
  { slug: 'entry-policy', title: 'Lobby and entry policy', path: '/api/v1/settings/entry-policy' },
  { slug: 'wake-policy', title: 'Wake policy', path: '/api/v1/settings/wake-policy' },
  { slug: 'session-sources', title: 'Session sources', path: '/api/v1/settings/auth-sources' },
  { slug: 'updates', title: 'Updates', path: '/api/v1/updates/report' },
  { slug: 'update-window', title: 'Maintenance window', path: '/api/v1/updates/window' },
  { slug: 'db-backup', title: 'Database backup', path: '/api/v1/platform/db-backup', download: true },
];

/** The first list in an answer: `{users: [...]}`, `{servers: [...]}`… */
function rowsOf(body: unknown): Array<Record<string, unknown>> | undefined {
  if (Array.isArray(body)) return body as Array<Record<string, unknown>>;
  if (body && typeof body === 'object') {
    for (const v of Object.values(body)) if (Array.isArray(v) && v.every((x) => x && typeof x === 'object')) return v as Array<Record<string, unknown>>;
  }
  return undefined;
}

function Fields(props: { body: Record<string, unknown> }) {
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

export function staffPages(app: Hono<AppEnv>, web: Web): void {
  app.get('/staff', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    return web.render(
      c,
      { title: 'Staff', viewer, notice: viewer.is_admin ? noticeOf(c) : { text: 'Staff pages are on the operator console, for staff.', error: true } },
      <ul>
        {SECTIONS.map((s) => <li><a href={`/staff/${s.slug}`}>{s.title}</a></li>)}
        <li>Members and API keys: with the members issue.</li>
      </ul>,
      viewer.is_admin ? 200 : 403,
    );
  });

  app.get('/staff/users/:id', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const id = encodeURIComponent(c.req.param('id'));
    const [user, quotas, sessions] = await Promise.all([
      web.api(c, 'GET', `/api/v1/users/${id}`),
      web.api(c, 'GET', `/api/v1/users/${id}/quotas`),
      web.api(c, 'GET', `/api/v1/users/${id}/sessions`),
    ]);
    if (!user.ok) return web.render(c, { title: 'User', viewer, notice: { text: user.error?.message ?? 'Refused.', error: true } }, <p><a href="/staff/users">Users</a></p>, user.status);
    return web.render(
      c,
      { title: `User ${show(user.body.username)}`, viewer },
      <>
        <Fields body={Object.fromEntries(Object.entries(user.body).filter(([, v]) => !Array.isArray(v)))} />
        <h2>Linked identities</h2>
        <RecordTable caption="Linked identities" rows={rowsOf({ l: user.body.linked_accounts }) ?? []} />
        <h2>Quotas</h2>
        {quotas.ok ? <Fields body={quotas.body} /> : <p>{quotas.error?.message}</p>}
        <h2>Sessions</h2>
        <RecordTable caption="Sessions" rows={rowsOf(sessions.body) ?? []} />
      </>,
    );
  });

  app.get('/staff/:section', async (c) => {
    const viewer = await web.viewer(c);
    if (viewer instanceof Response) return viewer;
    const section = SECTIONS.find((s) => s.slug === c.req.param('section'));
    if (!section) return c.notFound();
    if (section.download) {
      return web.render(c, { title: section.title, viewer }, <p><a href={section.path} download>Download a bundle of the database</a> (owner only; it needs a fresh proof of identity).</p>);
    }
    const answer = await web.api(c, 'GET', section.path);
    if (!answer.ok) return web.render(c, { title: section.title, viewer, notice: { text: answer.error?.message ?? 'Refused.', error: true } }, <p><a href="/staff">Staff pages</a></p>, answer.status);
    const rows = rowsOf(answer.body);
    return web.render(
      c,
      { title: section.title, viewer, notice: noticeOf(c) },
      rows ? <RecordTable caption={section.title} rows={rows} link={section.link} /> : <Fields body={answer.body} />,
    );
  });
}
