import type { Child } from 'hono/jsx';
import type { ApiAnswer } from './api.js';

/**
 * A form sent back with the API's refusal: which form, what was typed, and each message keyed by
 * the field it concerns (`_` when it names none), so the page shows it beside that field.
 */
export interface FormState {
  form: string;
  values: Record<string, string>;
  errors: Record<string, string>;
  status: number;
}

/**
 * The field an API refusal concerns: an error code the form names, else the body field a 400
 * message names (`json maxRunningServers: …`, `query path: …`), else none (`_`).
 */
export function fieldOfError(answer: ApiAnswer<unknown>, fields: string[], byCode: Record<string, string> = {}): string {
  const code = answer.error?.code ?? '';
  if (byCode[code]) return byCode[code];
  const message = answer.error?.message ?? '';
  const named = /^(?:json|query|param)\s+([A-Za-z0-9_]+)/.exec(message)?.[1];
  if (named && fields.includes(named)) return named;
  return fields.find((f) => new RegExp(`\\b${f}\\b`).test(message)) ?? '_';
}

/** The state a refusal leaves a form in. */
export function refused(form: string, values: Record<string, string>, answer: ApiAnswer<unknown>, fields: string[], byCode?: Record<string, string>): FormState {
  const field = fieldOfError(answer, fields, byCode);
  let message = answer.error?.message ?? 'Refused.';
  // A sign-in is a fresh proof: players by e-mailed code or passkey, staff by passkey or operator
  // login (staff have no e-mailed codes; on the .localhost defaults the console host has no passkey).
  if (answer.error?.code === 'reauth_required') message += ' Sign out and in again (players: by e-mailed code or passkey; staff: by passkey or operator login), then try again within 5 minutes.';
  return { form, values, errors: { [field]: message }, status: answer.status };
}

/** What one form of a page is handed: its own state when it was the one refused. */
export interface OwnState {
  values: Record<string, string>;
  errors: Record<string, string>;
  /** This form was the one refused: its fields show what was typed, not the stored values. */
  refused: boolean;
}

export function stateOf(state: FormState | undefined, form: string): OwnState {
  return state && state.form === form ? { values: state.values, errors: state.errors, refused: true } : { values: {}, errors: {}, refused: false };
}

/** An RFC 3339 time from a `datetime-local` field read as UTC; empty is null. */
export function utcOrNull(v: string | undefined): string | null {
  const t = (v ?? '').trim();
  if (!t) return null;
  return /Z$|[+-]\d\d:\d\d$/.test(t) ? t : `${t.length === 16 ? `${t}:00` : t}Z`;
}
/** An RFC 3339 time as a `datetime-local` field shows it (UTC). */
export const localOf = (v: unknown) => (typeof v === 'string' ? v.replace(/(\.\d+)?Z$/, '').slice(0, 16) : '');

/** A ticked checkbox as a form sends it. */
export const on = (v: string | undefined) => v === 'on' || v === 'true';

/**
 * One field of a `PostForm`: a text-like input (`type`), a select, a checkbox or a text area.
 * `value`/`checked` is what the page shows when the form was not just refused.
 */
export type FieldSpec =
  | { kind?: 'input'; id: string; name: string; label: string; type?: string; value?: string; required?: boolean; placeholder?: string; min?: string; max?: string }
  | { kind: 'select'; id: string; name: string; label: string; options: Array<string | [string, string]>; value?: string }
  | { kind: 'check'; id: string; name: string; label: string; checked?: boolean }
  | { kind: 'textarea'; id: string; name: string; label: string; value?: string; rows?: number; required?: boolean };

function FieldOf(props: { spec: FieldSpec; state: OwnState }) {
  const { spec, state } = props;
  const error = state.errors[spec.name];
  switch (spec.kind) {
    case 'select':
      return <Select id={spec.id} name={spec.name} label={spec.label} options={spec.options} value={state.refused ? state.values[spec.name] : spec.value} error={error} />;
    case 'check':
      return <Check id={spec.id} name={spec.name} label={spec.label} checked={state.refused ? on(state.values[spec.name]) : spec.checked} error={error} />;
    case 'textarea':
      return <TextArea id={spec.id} name={spec.name} label={spec.label} value={state.refused ? state.values[spec.name] : spec.value} error={error} rows={spec.rows} required={spec.required} />;
    default:
      return <Input id={spec.id} name={spec.name} label={spec.label} type={spec.type} value={state.refused ? state.values[spec.name] : spec.value} error={error} required={spec.required} placeholder={spec.placeholder} min={spec.min} max={spec.max} />;
  }
}

/**
 * The shape every write form of the pages has: a POST to a page route, its fields in rows (a row
 * of several is a grid), each refusal beside the field it names and one naming none under them,
 * what was typed kept after a refusal, one submit button. Works without scripts.
 */
export function PostForm(props: {
  action: string;
  state: OwnState;
  /** A field, a grid of fields, or a fieldset of them under a legend (checkboxes of one choice). */
  rows: Array<FieldSpec | FieldSpec[] | { legend: string; fields: FieldSpec[] }>;
  /** One button, or a group of them sending their value under one name (`op=ban` / `op=pardon`). */
  submit: string | { name: string; label: string; buttons: Array<[string, string]> };
  hidden?: Record<string, string>;
  secondary?: boolean;
  id?: string;
  label?: string;
  /** A heading inside the form, which names it. */
  heading?: { id: string; text: string };
  children?: Child;
}) {
  const { submit } = props;
  return (
    <form method="post" action={props.action} id={props.id} aria-label={props.heading ? undefined : props.label} aria-labelledby={props.heading?.id}>
      {props.heading ? <h3 id={props.heading.id}>{props.heading.text}</h3> : null}
      {Object.entries(props.hidden ?? {}).map(([k, v]) => <input type="hidden" name={k} value={v} />)}
      {props.rows.map((row) =>
        Array.isArray(row) ? (
          <div class="grid">{row.map((spec) => <FieldOf spec={spec} state={props.state} />)}</div>
        ) : 'legend' in row ? (
          <fieldset>
            <legend>{row.legend}</legend>
            {row.fields.map((spec) => <FieldOf spec={spec} state={props.state} />)}
          </fieldset>
        ) : (
          <FieldOf spec={row} state={props.state} />
        ),
      )}
      {props.children}
      <FormError errors={props.state.errors} />
      {typeof submit === 'string' ? (
        <button type="submit" class={props.secondary ? 'secondary' : undefined}>{submit}</button>
      ) : (
        <fieldset role="group" aria-label={submit.label}>
          {submit.buttons.map(([value, text], i) => <button type="submit" name={submit.name} value={value} class={i > 0 || props.secondary ? 'secondary' : undefined}>{text}</button>)}
        </fieldset>
      )}
    </form>
  );
}

/**
 * A list the pages show with a button or two on each row: the columns named, each cell drawn from
 * the row, the row's actions in the last column (one-button forms), a sentence when it is empty.
 */
export function ActionTable<T>(props: { caption: string; rows: T[]; empty: string; columns: Array<[string, (row: T) => Child]>; actions?: (row: T) => Child }) {
  if (props.rows.length === 0) return <p>{props.empty}</p>;
  return (
    <div class="overflow-auto" tabindex={0} role="region" aria-label={props.caption}>
      <table class="striped">
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map(([title]) => <th scope="col">{title}</th>)}
            {props.actions ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr>
              {props.columns.map(([, cell]) => <td>{cell(row)}</td>)}
              {props.actions ? <td class="actions">{props.actions(row)}</td> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A refusal that names no field, inside its form. */
export function FormError(props: { errors: Record<string, string> }) {
  return props.errors._ ? <p class="notice error" role="alert">{props.errors._}</p> : null;
}

/** A labelled select, its error beside it. */
export function Select(props: { id: string; name: string; label: string; options: Array<string | [string, string]>; value?: string; error?: string }) {
  const errorId = `${props.id}-error`;
  return (
    <label for={props.id}>
      {props.label}
      <select id={props.id} name={props.name} aria-invalid={props.error ? 'true' : undefined} aria-describedby={props.error ? errorId : undefined}>
        {props.options.map((o) => {
          const [value, text] = typeof o === 'string' ? [o, o] : o;
          return <option value={value} selected={value === props.value}>{text}</option>;
        })}
      </select>
      {props.error ? <small id={errorId} class="field-error">{props.error}</small> : null}
    </label>
  );
}

/** A labelled checkbox (sent as `on` when ticked), its error beside it. */
export function Check(props: { id: string; name: string; label: string; checked?: boolean; error?: string }) {
  const errorId = `${props.id}-error`;
  return (
    <label for={props.id}>
      <input type="checkbox" id={props.id} name={props.name} checked={props.checked} aria-invalid={props.error ? 'true' : undefined} aria-describedby={props.error ? errorId : undefined} />
      {props.label}
      {props.error ? <small id={errorId} class="field-error">{props.error}</small> : null}
    </label>
  );
}

/** A labelled text input with an id of its own (several forms on a page may share a field name). */
export function Input(props: { id: string; name: string; label: string; type?: string; value?: string; error?: string; required?: boolean; placeholder?: string; min?: string; max?: string }) {
  const errorId = `${props.id}-error`;
  return (
    <label for={props.id}>
      {props.label}
      <input
        id={props.id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value ?? ''}
        required={props.required}
        placeholder={props.placeholder}
        min={props.min}
        max={props.max}
        autocomplete="off"
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? errorId : undefined}
      />
      {props.error ? <small id={errorId} class="field-error">{props.error}</small> : null}
    </label>
  );
}

/** A labelled text area, its error beside it. */
export function TextArea(props: { id: string; name: string; label: string; value?: string; error?: string; rows?: number; required?: boolean }) {
  const errorId = `${props.id}-error`;
  return (
    <label for={props.id}>
      {props.label}
      <textarea id={props.id} name={props.name} rows={props.rows ?? 8} required={props.required} spellcheck={false} aria-invalid={props.error ? 'true' : undefined} aria-describedby={props.error ? errorId : undefined}>
        {props.value ?? ''}
      </textarea>
      {props.error ? <small id={errorId} class="field-error">{props.error}</small> : null}
    </label>
  );
}

/** Previous/next links over an API list read with `limit` and `offset` (its `total` says where it ends). */
export function Pager(props: { base: string; offset: number; limit: number; total: number; shown: number; label: string }) {
  const { offset, limit, total } = props;
  if (total <= limit && offset === 0) return null;
  const at = (o: number) => {
    const url = new URL(props.base, 'http://x');
    url.searchParams.set('offset', String(o));
    return url.pathname + url.search;
  };
  return (
    <nav aria-label={props.label} class="pager">
      <ul>
        <li>{offset > 0 ? <a href={at(Math.max(0, offset - limit))} rel="prev">Previous</a> : <span aria-disabled="true">Previous</span>}</li>
        <li><span>{`${total === 0 ? 0 : offset + 1}–${offset + props.shown} of ${total}`}</span></li>
        <li>{offset + limit < total ? <a href={at(offset + limit)} rel="next">Next</a> : <span aria-disabled="true">Next</span>}</li>
      </ul>
    </nav>
  );
}

/** `?offset=` as a page reads it: a whole number, 0 when absent or bad. */
export function offsetOf(raw: string | undefined): number {
  const n = Number(raw ?? 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/**
 * A secret the API shows this once (an API key, a webhook's signing secret): read-only, with a
 * copy button (`copy.js`), and said plainly that it will not be shown again. Never put in an address.
 */
export function SecretOnce(props: { secret: string; what: string; label: string; back: { href: string; text: string } }) {
  return (
    <section aria-labelledby="secret-once-heading">
      <h2 id="secret-once-heading">{props.label}</h2>
      <p class="notice" role="status">{`${props.what}. Its ${props.label.toLowerCase()} is shown this once and never again: copy it now and keep it somewhere safe.`}</p>
      <label for="secret-once">{props.label}</label>
      <fieldset role="group">
        <input id="secret-once" readonly value={props.secret} autocomplete="off" spellcheck={false} />
        <button type="button" data-copy="secret-once" hidden>Copy</button>
      </fieldset>
      <p id="secret-once-status" role="status" hidden />
      <p><a href={props.back.href}>{props.back.text}</a></p>
    </section>
  );
}
