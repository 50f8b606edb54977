import type { Child } from 'hono/jsx';
import type { Assets } from './assets.js';

/** Who is looking, as `/me` says, and on which host: what the navigation offers. */
export interface Viewer {
  user_id: string;
  username: string;
  email: string;
  role: string;
  is_admin: boolean;
  is_owner: boolean;
  setup_required: boolean;
}

export interface PageFrame {
  title: string;
  nonce: string;
  assets: Assets;
  viewer?: Viewer;
  /** The console host: staff pages; else the panel. */
  onConsole: boolean;
  /** Where staff go for staff pages, when this is the panel host. */
  consoleUrl?: string;
  scripts?: string[];
  styles?: string[];
  notice?: { text: string; error?: boolean };
}

function Nav(props: { frame: PageFrame }) {
  const { viewer, onConsole, consoleUrl } = props.frame;
  return (
    <nav class="container">
      <ul>
        <li>
          <a href="/">
            <strong>Felis {onConsole ? 'operator console' : 'panel'}</strong>
          </a>
        </li>
      </ul>
      {viewer ? (
        <ul>
          <li><a href="/servers">Servers</a></li>
          <li><a href="/submissions">Submissions</a></li>
          {onConsole && viewer.is_admin ? <li><a href="/staff">Staff</a></li> : null}
          {!onConsole && consoleUrl && viewer.role !== 'user' ? <li><a href={consoleUrl}>Operator console</a></li> : null}
          <li><a href="/account">Account ({viewer.username})</a></li>
          <li>
            <form method="post" action="/sign-out" class="sign-out">
              <button type="submit" class="secondary outline">Sign out</button>
            </form>
          </li>
        </ul>
      ) : (
        <ul>
          <li><a href="/sign-in">Sign in</a></li>
        </ul>
      )}
    </nav>
  );
}

export function Page(props: { frame: PageFrame; children?: Child }) {
  const { frame } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {/* Under the answers' no-referrer a browser sends `Origin: null` with a form or fetch POST,
            which the cross-site guard must refuse; same-origin keeps the real origin on this site. */}
        <meta name="referrer" content="same-origin" />
        <title>{`${frame.title} · Felis`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={frame.assets.url('pico.css')} />
        <link rel="stylesheet" href={frame.assets.url('panel.css')} />
        {(frame.styles ?? []).map((s) => <link rel="stylesheet" href={frame.assets.url(s)} />)}
      </head>
      <body>
        <header>
          <Nav frame={frame} />
        </header>
        <main class="container">
          <h1>{frame.title}</h1>
          {frame.notice ? (
            <p class={frame.notice.error ? 'notice error' : 'notice'} role={frame.notice.error ? 'alert' : 'status'}>
              {frame.notice.text}
            </p>
          ) : null}
          {props.children}
        </main>
        {(frame.scripts ?? []).map((s) => <script nonce={frame.nonce} src={frame.assets.url(s)} defer />)}
      </body>
    </html>
  );
}

/** A labelled input with its error, if the API named one for it, right beside it. */
export function Field(props: { name: string; label: string; type?: string; value?: string; error?: string; required?: boolean; autocomplete?: string; placeholder?: string; inputmode?: 'numeric' | 'text' | 'email' }) {
  const id = `f-${props.name}`;
  const errorId = `${id}-error`;
  return (
    <label for={id}>
      {props.label}
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value ?? ''}
        required={props.required}
        autocomplete={props.autocomplete}
        placeholder={props.placeholder}
        inputmode={props.inputmode}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? errorId : undefined}
      />
      {props.error ? <small id={errorId} class="field-error">{props.error}</small> : null}
    </label>
  );
}

/** A one-button form posting to a page route (works without scripts). */
export function ActionButton(props: { action: string; label: string; name?: string; value?: string; fields?: Record<string, string>; secondary?: boolean; confirm?: string }) {
  return (
    <form method="post" action={props.action}>
      {Object.entries(props.fields ?? {}).map(([k, v]) => <input type="hidden" name={k} value={v} />)}
      <button type="submit" name={props.name} value={props.value} class={props.secondary ? 'secondary' : undefined}>
        {props.label}
      </button>
    </form>
  );
}

/** A plain table of records: the columns named, each cell its value as text. */
export function RecordTable(props: { rows: Array<Record<string, unknown>>; columns?: string[]; caption: string; link?: (row: Record<string, unknown>) => string | undefined }) {
  const columns = props.columns ?? [...new Set(props.rows.flatMap((r) => Object.keys(r).filter((k) => isScalar(r[k]))))].slice(0, 8);
  if (props.rows.length === 0) return <p>Nothing here yet.</p>;
  return (
    <div class="overflow-auto" tabindex={0} role="region" aria-label={props.caption}>
      <table class="striped">
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>{columns.map((c) => <th scope="col">{c}</th>)}</tr>
        </thead>
        <tbody>
          {props.rows.map((row) => {
            const href = props.link?.(row);
            return (
              <tr>
                {columns.map((c, i) => (
                  <td>{i === 0 && href ? <a href={href}>{show(row[c])}</a> : show(row[c])}</td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function isScalar(v: unknown): boolean {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

export function show(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
