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
  // A sign-in by e-mailed code or passkey is a fresh proof (on the .localhost defaults the console
  // host has no passkey of its own, so the page says the way that always works).
  if (answer.error?.code === 'reauth_required') message += ' Sign out and in again (by e-mailed code or passkey), then save within 5 minutes.';
  return { form, values, errors: { [field]: message }, status: answer.status };
}

/** What one form of a page is handed: its own state when it was the one refused. */
export function stateOf(state: FormState | undefined, form: string): { values: Record<string, string>; errors: Record<string, string> } {
  return state && state.form === form ? { values: state.values, errors: state.errors } : { values: {}, errors: {} };
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
