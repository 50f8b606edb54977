import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { updateWindow } from '../../db/schema/operations.js';
import { DomainError } from '../../lib/errors.js';
import type { UpdateWindowView } from './schema.js';

export interface UpdateWindow {
  start: Date | null;
  end: Date | null;
}

async function readWindow(db: Queryable): Promise<UpdateWindow> {
  const [row] = await db.select({ start: updateWindow.start, end: updateWindow.end }).from(updateWindow);
  return row ?? { start: null, end: null };
}

/** Both ends set or both null; the end after the start (contract: UpdateWindow, PUT rules). */
function parseWindow(view: UpdateWindowView): UpdateWindow {
  if ((view.start === null) !== (view.end === null)) {
    throw new DomainError('bad_request', 'Set both ends of the window, or clear both with null.');
  }
  const window = { start: view.start === null ? null : new Date(view.start), end: view.end === null ? null : new Date(view.end) };
  if (window.start && window.end && window.end <= window.start) {
    throw new DomainError('bad_request', 'The end of the window must be after its start.');
  }
  return window;
}

async function writeWindow(db: Queryable, window: UpdateWindow, by: string, now: Date): Promise<void> {
  const values = { id: 1, start: window.start, end: window.end, updatedAt: now, updatedBy: by };
  await db
    .insert(updateWindow)
    .values(values)
    .onConflictDoUpdate({ target: updateWindow.id, set: { start: sql`excluded.start`, end: sql`excluded."end"`, updatedAt: now, updatedBy: by } });
}

/** Whether an update may be applied at `now`: start inclusive, end exclusive; an unset window never opens. */
function isOpen(window: UpdateWindow, now: Date): boolean {
  return window.start !== null && window.end !== null && now >= window.start && now < window.end;
}

function windowView(window: UpdateWindow): UpdateWindowView {
  return { start: window.start?.toISOString() ?? null, end: window.end?.toISOString() ?? null };
}

/** The window as the operator console shows it. */
export async function currentWindow(db: Queryable): Promise<UpdateWindowView> {
  return windowView(await readWindow(db));
}

/** Sets or clears the window; resolves it as stored. */
export async function setWindow(db: Queryable, view: UpdateWindowView, by: string, now: Date): Promise<UpdateWindowView> {
  const window = parseWindow(view);
  await writeWindow(db, window, by, now);
  return windowView(window);
}

/** The window as the updater reads it: with whether `now` is inside it. */
export async function updaterWindow(db: Queryable, now: Date): Promise<UpdateWindowView & { open: boolean }> {
  const window = await readWindow(db);
  return { ...windowView(window), open: isOpen(window, now) };
}
