import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { BackupStoreFullError } from '../../../adapters/backup-store/types.js';
import { and, asc, count, eq, gt, isNull, lt, not, notExists, or, sql, sum } from 'drizzle-orm';
import type { Queryable } from '../../../db/client.js';
import { worldUploadSessions, type UploadPart } from '../../../db/schema/world-files.js';
import { worldJobs } from '../../../db/schema/worlds.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { isUuid } from '../../../lib/uuid.js';
import { newId } from '../jobs/index.js';
import { worldSetting } from '../settings/index.js';
import { FileOpFailure } from './ops.js';

export type UploadDeps = Pick<Deps, 'database' | 'clock' | 'random' | 'config' | 'log' | 'staging'>;
export type SessionRow = typeof worldUploadSessions.$inferSelect;

/** How long a part (or a commit being started) holds a session before another may: a dead writer's claim lapses. */
const CLAIM_MS = 10 * 60 * 1000;

export interface UploadSessionView {
  id: string;
  path: string;
  size: number;
  received: number;
  part_max_bytes: number;
  parts: UploadPart[];
}

/**
 * Where sessions stage their bytes: the staging store every replica reads (the bucket when one is
 * configured, else DATA_DIR/uploads), one object per part, keyed by the part's offset in fixed
 * width so that key order is byte order. Which replica takes a part, the commit or the status
 * does not matter.
 */
export const STAGE_PREFIX = 'worlds/';
const stagePrefix = (id: string) => `${STAGE_PREFIX}${id}/`;
const partKey = (id: string, offset: number) => `${stagePrefix(id)}${String(offset).padStart(15, '0')}`;

/** The objects staged for a session (recorded parts, and a part being written or never recorded). */
export const stagedObjects = (deps: Pick<Deps, 'staging'>, id: string) => deps.staging.list(stagePrefix(id));

/** Removes every byte staged for a session. */
export async function removeStaged(deps: Pick<Deps, 'staging'>, id: string): Promise<void> {
  for (const object of await stagedObjects(deps, id)) await deps.staging.delete(object.key);
}

const notFound = () =>
  new DomainError('upload_not_found', 'No such upload; it was cancelled, landed, or left idle too long, so start it again.');
const busy = () => new DomainError('upload_busy', 'Another request is still writing or landing this upload; read where it stands and continue from there.');

export async function sessionView(db: Queryable, row: SessionRow): Promise<UploadSessionView> {
  return {
    id: row.id,
    path: row.path,
    size: row.size,
    received: row.received,
    part_max_bytes: await worldSetting(db, 'partMaxBytes'),
    parts: row.parts,
  };
}

export async function idleCutoff(deps: UploadDeps): Promise<Date> {
  return new Date(deps.clock.now().getTime() - (await worldSetting(deps.database.db, 'sessionIdleSeconds')) * 1000);
}

/**
 * How long a session may sit idle, tied to its progress (issue 43: one byte sent to an 8 GiB
 * session held its room 6 h): `upload_empty_session_idle_seconds` with nothing received, growing
 * with the share received to `upload_session_idle_seconds` for a nearly whole file.
 */
async function idleWindows(deps: UploadDeps): Promise<{ empty: number; full: number }> {
  const [full, empty] = await Promise.all([worldSetting(deps.database.db, 'sessionIdleSeconds'), worldSetting(deps.database.db, 'emptySessionIdleSeconds')]);
  return { empty: Math.min(full, empty), full };
}

export const idleSecondsOf = (windows: { empty: number; full: number }, row: Pick<SessionRow, 'received' | 'size'>): number =>
  windows.empty + ((windows.full - windows.empty) * row.received) / Math.max(row.size, 1);

/** The row was touched within its own idle window (idleSecondsOf, in SQL). */
async function touchedWithinWindow(deps: UploadDeps) {
  const { empty, full } = await idleWindows(deps);
  const nowSeconds = deps.clock.now().getTime() / 1000;
  return sql`${worldUploadSessions.touchedAt} > to_timestamp(${nowSeconds}::float8 - (${empty}::float8 + ${full - empty}::float8 * ${worldUploadSessions.received}::float8 / greatest(${worldUploadSessions.size}, 1)))`;
}

/**
 * A session still alive: touched within its idle window (idleSecondsOf), or a part is arriving
 * (its claim holds it) and it was touched within `upload_session_idle_seconds`. Only live
 * sessions reserve room and count against the account's bounds; the sweep drops the rest.
 */
export async function liveSession(deps: UploadDeps) {
  const now = deps.clock.now();
  return or(await touchedWithinWindow(deps), and(gt(worldUploadSessions.busyUntil, now), gt(worldUploadSessions.touchedAt, await idleCutoff(deps))))!;
}

/** A session past its idle window: the sweep's to drop (never while a part or a commit holds it: the sweep asks freeOf too). */
export async function lapsedSession(deps: UploadDeps) {
  return not(await touchedWithinWindow(deps));
}

/** Neither a part nor a commit holds the session (a commit's job that ended, however, lets go). */
export function freeOf(db: Queryable, now: Date) {
  return and(
    or(isNull(worldUploadSessions.busyUntil), lt(worldUploadSessions.busyUntil, now)),
    or(
      isNull(worldUploadSessions.commitJob),
      notExists(
        db
          .select({ id: worldJobs.id })
          .from(worldJobs)
          .where(and(eq(worldJobs.id, worldUploadSessions.commitJob), eq(worldJobs.state, 'running'))),
      ),
    ),
  );
}

/**
 * An account's live session on this server (any account's, for staff: `userId` undefined); anyone
 * else's, or one swept or idle too long, is 404 upload_not_found.
 */
export async function findSession(deps: UploadDeps, userId: string | undefined, serverName: string, id: string): Promise<SessionRow> {
  if (!isUuid(id)) throw notFound();
  const [row] = await deps.database.db
    .select()
    .from(worldUploadSessions)
    .where(
      and(
        eq(worldUploadSessions.id, id),
        ...(userId === undefined ? [] : [eq(worldUploadSessions.userId, userId)]),
        eq(worldUploadSessions.serverName, serverName),
        await liveSession(deps),
      ),
    );
  if (!row) throw notFound();
  return row;
}

/**
 * Begins a session for a file of `size` bytes that will land at `path` (already checked). The room
 * for the whole file must be free on the staging disk beside what the open sessions still lack (507
 * uploads_full), an account holds at most `upload_sessions_per_user` (429 too_many_uploads), and its
 * sessions reserve at most `upload_reserved_bytes_per_user` together (413 too_large for a file over
 * it alone, else 429 too_many_uploads).
 */
export async function beginUpload(deps: UploadDeps, userId: string, serverName: string, path: string, size: number): Promise<SessionRow> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const live = await liveSession(deps);
  const [cap, reservable] = await Promise.all([worldSetting(db, 'sessionsPerUser'), worldSetting(db, 'reservedBytesPerUser')]);
  const mineNow = () =>
    db
      .select({ n: count(), bytes: sum(worldUploadSessions.size) })
      .from(worldUploadSessions)
      .where(and(eq(worldUploadSessions.userId, userId), live));
  const [mine] = await mineNow();
  if ((mine?.n ?? 0) >= cap) throw tooMany(cap);

  // A local staging disk is counted; a bucket answers a part it has no room for (uploads_full then).
  const disk = await deps.staging.freeBytes?.();
  const [owed] = await db
    .select({ bytes: sum(sql`${worldUploadSessions.size} - ${worldUploadSessions.received}`) })
    .from(worldUploadSessions)
    .where(live);
  if (disk !== undefined && size > disk - Number(owed?.bytes ?? 0)) {
    throw new DomainError('uploads_full', 'There is no room to take this upload right now; try again later or ask an admin.');
  }
  if (size > reservable) throw tooLargeFor(reservable);
  if (Number(mine?.bytes ?? 0) + size > reservable) throw reservedUp(reservable);

  const id = newId(deps.random);
  const [row] = await db
    .insert(worldUploadSessions)
    .values({ id, userId, serverName, path, size, received: 0, parts: [], createdAt: now, touchedAt: now })
    .returning();
  // Two begins racing past the count or the bytes: the later one gives way, so neither bound is exceeded.
  const [after] = await mineNow();
  if ((after?.n ?? 0) > cap || Number(after?.bytes ?? 0) > reservable) {
    await db.delete(worldUploadSessions).where(eq(worldUploadSessions.id, id));
    throw (after?.n ?? 0) > cap ? tooMany(cap) : reservedUp(reservable);
  }
  // Parts are staged only under a claim on this row: a staged object without a row is an orphan the sweep may remove.
  return row!;
}

const tooMany = (cap: number) => new DomainError('too_many_uploads', `You have ${cap} uploads in progress; finish or cancel one first.`);
const tooLargeFor = (bytes: number) => new DomainError('too_large', `An upload may reserve at most ${bytes} bytes; this file is larger.`);
const reservedUp = (bytes: number) =>
  new DomainError('too_many_uploads', `Your uploads in progress would reserve more than ${bytes} bytes together; finish or cancel one first.`);

/** An account's live sessions on this server (every account's, for staff: `userId` undefined), oldest first, each with when it lapses if nothing more arrives. */
export async function listSessions(deps: UploadDeps, userId: string | undefined, serverName: string): Promise<Array<SessionRow & { expiresAt: Date }>> {
  const { db } = deps.database;
  const [rows, windows] = await Promise.all([
    db
      .select()
      .from(worldUploadSessions)
      .where(and(...(userId === undefined ? [] : [eq(worldUploadSessions.userId, userId)]), eq(worldUploadSessions.serverName, serverName), await liveSession(deps)))
      .orderBy(asc(worldUploadSessions.createdAt), asc(worldUploadSessions.id)),
    idleWindows(deps),
  ]);
  return rows.map((row) => {
    const lapses = Math.max(row.touchedAt.getTime() + Math.floor(idleSecondsOf(windows, row) * 1000), row.busyUntil?.getTime() ?? 0);
    return { ...row, expiresAt: new Date(lapses) };
  });
}

/**
 * Claims the session for one part at `offset`: it must start where the staged bytes end (409
 * upload_offset_mismatch, which says where), and nothing else may hold it (409 upload_busy).
 */
async function claimPart(deps: UploadDeps, row: SessionRow, offset: number): Promise<void> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const [claimed] = await db
    .update(worldUploadSessions)
    .set({ busyUntil: new Date(now.getTime() + CLAIM_MS), touchedAt: now })
    .where(and(eq(worldUploadSessions.id, row.id), eq(worldUploadSessions.received, offset), freeOf(db, now)))
    .returning({ id: worldUploadSessions.id });
  if (claimed) return;
  const [current] = await db.select().from(worldUploadSessions).where(eq(worldUploadSessions.id, row.id));
  if (!current) throw notFound();
  if (current.received !== offset) {
    throw new DomainError('upload_offset_mismatch', `The upload holds ${current.received} bytes; send the part that starts there.`, {
      uploadOffset: current.received,
    });
  }
  throw busy();
}

/**
 * Appends one part (the request body, as the pipeline hands it over) at `offset`. The part is
 * streamed into the staging store as an object of its own; a part that breaks off, runs over the
 * limit or fails its Content-Digest is removed again, and the session stays where it was.
 */
export async function appendPart(
  deps: UploadDeps,
  row: SessionRow,
  offset: number,
  body: AsyncIterable<Uint8Array>,
): Promise<SessionRow> {
  const { db } = deps.database;
  await claimPart(deps, row, offset);
  const hash = createHash('sha256');
  let size = 0;
  // An object at this offset is a part whose answer was never recorded: the put replaces it.
  const key = partKey(row.id, offset);
  try {
    const counted = Readable.from(
      (async function* () {
        for await (const chunk of body) {
          hash.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      })(),
      { objectMode: false },
    );
    await deps.staging.put(key, counted);
    if (size === 0) await deps.staging.delete(key);
  } catch (err) {
    await deps.staging.delete(key).catch((e: unknown) => deps.log.warn({ err: e, upload: row.id }, 'could not remove a failed part'));
    await releaseClaim(deps, row.id);
    if (err instanceof BackupStoreFullError) {
      throw new DomainError('uploads_full', 'The staging store is full; nothing of this part was kept.');
    }
    throw err;
  }
  const part: UploadPart = { size, sha256: hash.digest('hex') };
  const now = deps.clock.now();
  const [updated] = await db
    .update(worldUploadSessions)
    .set({
      received: offset + size,
      parts: size > 0 ? [...row.parts, part] : row.parts,
      busyUntil: null,
      touchedAt: now,
    })
    .where(eq(worldUploadSessions.id, row.id))
    .returning();
  if (!updated) {
    // Cancelled or swept meanwhile: nothing may keep its bytes.
    await removeStaged(deps, row.id).catch(() => undefined);
    throw notFound();
  }
  return updated;
}

async function releaseClaim(deps: UploadDeps, id: string): Promise<void> {
  await deps.database.db
    .update(worldUploadSessions)
    .set({ busyUntil: null })
    .where(eq(worldUploadSessions.id, id))
    .catch((err: unknown) => deps.log.warn({ err, upload: id }, 'could not release an upload claim'));
}

/** Cancels the caller's session and frees its room (409 upload_busy while a part or a commit holds it). */
export async function dropUpload(deps: UploadDeps, row: SessionRow): Promise<void> {
  const { db } = deps.database;
  const [gone] = await db
    .delete(worldUploadSessions)
    .where(and(eq(worldUploadSessions.id, row.id), freeOf(db, deps.clock.now())))
    .returning({ id: worldUploadSessions.id });
  if (!gone) throw busy();
  await removeStaged(deps, row.id);
}

/**
 * Holds a complete session for a commit while the world job is being started (409
 * upload_incomplete before every byte is here). `bind` hands it to the job; `release` lets go.
 */
export async function claimForCommit(deps: UploadDeps, row: SessionRow) {
  const { db } = deps.database;
  if (row.received !== row.size) {
    throw new DomainError('upload_incomplete', `The upload has not finished arriving (${row.received} of ${row.size} bytes); send the rest.`);
  }
  const now = deps.clock.now();
  const [claimed] = await db
    .update(worldUploadSessions)
    .set({ busyUntil: new Date(now.getTime() + CLAIM_MS), touchedAt: now })
    .where(and(eq(worldUploadSessions.id, row.id), eq(worldUploadSessions.received, row.size), freeOf(db, now)))
    .returning({ id: worldUploadSessions.id });
  if (!claimed) throw busy();
  return {
    bind: (jobId: string) =>
      db.update(worldUploadSessions).set({ commitJob: jobId, busyUntil: null }).where(eq(worldUploadSessions.id, row.id)),
    release: () => releaseClaim(deps, row.id),
  };
}

/**
 * The staged bytes as the parts left them, read part by part from the staging store, each part's
 * sha-256 checked again on the way: a staged byte that changed stops the commit before the file is
 * renamed into the world.
 */
export async function* stagedBytes(deps: Pick<Deps, 'staging'>, id: string, parts: UploadPart[], onBytes: (done: number) => Promise<void>): AsyncGenerator<Uint8Array> {
  const changed = () =>
    new FileOpFailure({ code: 'digest_mismatch', message: 'The staged upload no longer matches the parts it took; cancel it and upload again.' });
  let offset = 0;
  let done = 0;
  for (const part of parts) {
    const hash = createHash('sha256');
    let inPart = 0;
    let source: AsyncIterable<Buffer>;
    try {
      source = (await deps.staging.get(partKey(id, offset))) as AsyncIterable<Buffer>;
    } catch {
      throw changed();
    }
    for await (const chunk of source) {
      inPart += chunk.length;
      if (inPart > part.size) throw changed();
      hash.update(chunk);
      done += chunk.length;
      await onBytes(done);
      yield chunk;
    }
    if (inPart !== part.size || hash.digest('hex') !== part.sha256) throw changed();
    offset += part.size;
  }
}

/** A landed session is done: its row and its staged bytes go. */
export async function finishUpload(deps: UploadDeps, id: string): Promise<void> {
  await deps.database.db.delete(worldUploadSessions).where(eq(worldUploadSessions.id, id));
  await removeStaged(deps, id);
}
