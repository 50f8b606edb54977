import { sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { updateWindow } from '../../db/schema/operations.js';
import { DomainError } from '../../lib/errors.js';
import type { UpdateWindowView } from './schema.js';

export interface UpdateWindow {
  start: Date | null;
  end: Date | null;
}

export async function readWindow(db: Queryable): Promise<UpdateWindow> {
  const [row] = await db.select({ start: updateWindow.start, end: updateWindow.end }).from(updateWindow);
  return row ?? { start: null, end: null };
}

/** Both ends set or both null; the end after the start (contract: UpdateWindow, PUT rules). */
export function parseWindow(view: UpdateWindowView): UpdateWindow {
  if ((view.start === null) !== (view.end === null)) {
    throw new DomainError('bad_request', 'Set both ends of the window, or clear both with null.');
  }
  const window = { start: view.start === null ? null : new Date(view.start), end: view.end === null ? null : new Date(view.end) };
  if (window.start && window.end && window.end <= window.start) {
    throw new DomainError('bad_request', 'The end of the window must be after its start.');
  }
  return window;
}

export async function writeWindow(db: Queryable, window: UpdateWindow, by: string, now: Date): Promise<void> {
  const values = { id: 1, start: window.start, end: window.end, updatedAt: now, updatedBy: by };
  await db
    .insert(updateWindow)
    .values(values)
    .onConflictDoUpdate({ target: updateWindow.id, set: { start: sql`excluded.start`, end: sql`excluded."end"`, updatedAt: now, updatedBy: by } });
}

/** Whether an update may be applied at `now`: start inclusive, end exclusive; an unset window never opens. */
export function isOpen(window: UpdateWindow, now: Date): boolean {
  return window.start !== null && window.end !== null && now >= window.start && now < window.end;
}

export function windowView(window: UpdateWindow): UpdateWindowView {
  return { start: window.start?.toISOString() ?? null, end: window.end?.toISOString() ?? null };
}
