import { and, asc, eq, gt, gte, lt, lte, max, sql } from 'drizzle-orm';
import type { Queryable } from '../../db/client.js';
import { buildLogLines, buildLogSources, builds } from '../../db/schema/builds.js';
import type { Deps } from '../../deps.js';
import { formatEventId, LineNumbering, resumePosition, takeStreamSlot, type StreamPosition } from '../console/index.js';
import { COPY_COMPLETE_SOURCE } from './log-copy.js';
import { getBuild } from './service.js';
import { isTerminal } from './states.js';
import type { BuildsParts } from './runner.js';

/** Section 6 and the stream rules of api-extensions. */
export const STREAM_RULES = {
  lifetimeMs: 30 * 60 * 1000,
  recheckMs: 60 * 1000,
  keepAliveMs: 15 * 1000,
  resumeWindowMs: 60 * 60 * 1000,
  pollMs: 1000,
  copyGraceMs: 60 * 1000,
};

const BATCH = 500;

export interface LogStreamOptions {
  buildId: string;
  /**
   * `Last-Event-ID` (as the route's schema lets it through): within the resume window the stream
   * resumes after that line, or from the first line of a whole second; otherwise the whole log.
   */
  lastEventId?: string;
  /** Whether the caller may still read the stream (re-checked every `recheckMs`). */
  stillAllowed: () => Promise<boolean>;
  rules?: Partial<typeof STREAM_RULES>;
  /** Called once when the stream ends, whichever way. */
  onClose?: () => void;
  /**
   * The log is copied from the cluster after the fact (Kubernetes): an ended build's stream waits
   * until the copy is complete, at most `copyGraceMs` after the build ended.
   */
  copied?: boolean;
}

const encoder = new TextEncoder();

/** Whether the cluster's copier stored every step of the build that ran (log-copy.ts). */
async function copyComplete(db: Queryable, buildId: string): Promise<boolean> {
  const [row] = await db
    .select({ done: buildLogSources.done })
    .from(buildLogSources)
    .where(and(eq(buildLogSources.buildId, buildId), eq(buildLogSources.source, COPY_COMPLETE_SOURCE)));
  return row?.done === true;
}

/**
 * The sequence number before the first line stamped at or after `second`: a resume from that
 * second sends the lines after it. When no line is that late yet, the last line stamped before
 * it: not simply the last stored line, since a line of that second may land between the two reads
 * (the job keeps writing) and would then be skipped.
 */
async function beforeSecond(db: Queryable, buildId: string, second: number): Promise<number> {
  const [first] = await db
    .select({ seq: buildLogLines.seq })
    .from(buildLogLines)
    .where(and(eq(buildLogLines.buildId, buildId), gte(buildLogLines.at, new Date(second * 1000))))
    .orderBy(asc(buildLogLines.seq))
    .limit(1);
  if (first) return first.seq - 1;
  const [last] = await db
    .select({ seq: max(buildLogLines.seq) })
    .from(buildLogLines)
    .where(and(eq(buildLogLines.buildId, buildId), lt(buildLogLines.at, new Date(second * 1000))));
  return last?.seq ?? 0;
}

/**
 * Where a resume starts: the sequence number of the line the client has last (the line `index`
 * of `second` in sequence order), or before the first line of a whole second; and the numbering
 * of the lines up to there, so the lines sent next get the ids every replica gives them. A line
 * id this build does not have resumes from the next second.
 */
async function resumeAt(db: Queryable, buildId: string, position: StreamPosition): Promise<{ after: number; numbering: LineNumbering }> {
  const ofBuild = eq(buildLogLines.buildId, buildId);
  let after: number | undefined;
  if (position.index >= 0) {
    const inSecond = and(ofBuild, gte(buildLogLines.at, new Date(position.second * 1000)), lt(buildLogLines.at, new Date((position.second + 1) * 1000)));
    const [line] = await db.select({ seq: buildLogLines.seq }).from(buildLogLines).where(inSecond).orderBy(asc(buildLogLines.seq)).offset(position.index).limit(1);
    after = line?.seq;
  }
  after ??= await beforeSecond(db, buildId, position.index >= 0 ? position.second + 1 : position.second);
  const second = sql<number>`floor(extract(epoch from ${buildLogLines.at}))`.mapWith(Number);
  const counts = await db
    .select({ second, lines: sql<number>`count(*)`.mapWith(Number) })
    .from(buildLogLines)
    .where(and(ofBuild, lte(buildLogLines.seq, after)))
    .groupBy(sql`1`);
  return { after, numbering: new LineNumbering(counts.map((c) => [c.second, c.lines] as const)) };
}

/**
 * The build log as Server-Sent Events: the whole log (or what follows the resumed line), then new lines
 * as the job writes them, read from the database so any replica can serve it. Ends once the build
 * is terminal and every line went out, after the stream lifetime, on shutdown, or with
 * `event: revoked` when the caller lost access.
 */
export function buildLogEvents(deps: Pick<Deps, 'database' | 'clock' | 'shutdown' | 'log'>, options: LogStreamOptions): ReadableStream<Uint8Array> {
  const rules = { ...STREAM_RULES, ...options.rules };
  const db = deps.database.db;
  const stop = new AbortController();
  const onShutdown = () => stop.abort();
  let closed = false;
  const finish = () => {
    deps.shutdown.removeEventListener('abort', onShutdown);
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  const idle = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });

  return new ReadableStream<Uint8Array>({
    start: () => {
      if (deps.shutdown.aborted) stop.abort();
      deps.shutdown.addEventListener('abort', onShutdown, { once: true });
    },
    cancel: () => {
      stop.abort();
      finish();
    },
    pull: async (controller) => {
      try {
        await pump(controller);
      } catch (err) {
        deps.log.warn({ err, buildId: options.buildId }, 'build log stream failed');
      }
      finish();
      controller.close();
    },
  });

  async function pump(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    const send = (text: string) => controller.enqueue(encoder.encode(text));
    const started = deps.clock.now().getTime();
    let lastSent = started;
    let lastCheck = started;
    const position = resumePosition(options.lastEventId, started, rules.resumeWindowMs);
    const resumed = position ? await resumeAt(db, options.buildId, position) : { after: 0, numbering: new LineNumbering() };
    const { numbering } = resumed;
    let { after } = resumed;
    send(': build log\n\n');
    while (!stop.signal.aborted) {
      const rows = await db
        .select({ seq: buildLogLines.seq, at: buildLogLines.at, line: buildLogLines.line })
        .from(buildLogLines)
        .where(and(eq(buildLogLines.buildId, options.buildId), gt(buildLogLines.seq, after)))
        .orderBy(asc(buildLogLines.seq))
        .limit(BATCH);
      for (const row of rows) {
        send(`id: ${formatEventId(numbering.next(row.at.getTime()))}\ndata: ${row.line}\n\n`);
        after = row.seq;
      }
      const now = deps.clock.now().getTime();
      if (rows.length > 0) lastSent = now;
      if (rows.length === BATCH) continue;
      const [build] = await db
        .select({ status: builds.status, finishedAt: builds.finishedAt, jobName: builds.jobName })
        .from(builds)
        .where(eq(builds.id, options.buildId));
      if (!build || isTerminal(build.status)) {
        // Lines written just before the terminal move are read once more before the end.
        const [late] = await db
          .select({ seq: buildLogLines.seq })
          .from(buildLogLines)
          .where(and(eq(buildLogLines.buildId, options.buildId), gt(buildLogLines.seq, after)))
          .limit(1);
        if (late) continue;
        // A build that never had a Job has nothing left to copy.
        if (!build?.jobName || !options.copied || (await copyComplete(db, options.buildId))) return;
        if (now - (build.finishedAt?.getTime() ?? 0) >= rules.copyGraceMs) return;
      }
      if (now - started >= rules.lifetimeMs) return;
      if (now - lastCheck >= rules.recheckMs) {
        lastCheck = now;
        if (!(await options.stillAllowed())) {
          send('event: revoked\ndata: revoked\n\n');
          return;
        }
      }
      if (now - lastSent >= rules.keepAliveMs) {
        send(': keep-alive\n\n');
        lastSent = now;
      }
      await idle(rules.pollMs);
    }
  }
}

export interface BuildLogRequest {
  buildId: string;
  /** The staff member who reads: the stream holds one of their event streams. */
  userId: string;
  lastEventId?: string;
  /** Whether the reader's session still holds (re-checked every `recheckMs`); throwing counts as no. */
  stillSignedIn: () => Promise<boolean>;
}

/**
 * A build's log as a stream for staff: 404 for an unknown build, and 429 past the account's event
 * streams (the build log counts against them, as the console does); the slot is kept while the
 * reader stays signed in and given back when the stream ends.
 */
export async function openBuildLog(
  deps: Pick<Deps & BuildsParts, 'database' | 'clock' | 'shutdown' | 'log' | 'buildRunner'>,
  request: BuildLogRequest,
): Promise<ReadableStream<Uint8Array>> {
  const { buildId } = request;
  await getBuild(deps.database.db, buildId);
  const slot = await takeStreamSlot(deps, request.userId, 'build-log', buildId, STREAM_RULES.recheckMs * 2);
  return buildLogEvents(deps, {
    buildId,
    lastEventId: request.lastEventId,
    stillAllowed: async () => {
      try {
        const signedIn = await request.stillSignedIn();
        await slot.renew();
        return signedIn;
      } catch {
        return false;
      }
    },
    copied: deps.buildRunner?.kind === 'kubernetes',
    onClose: () => void slot.release().catch((err: unknown) => deps.log.warn({ err, build_id: buildId }, 'stream slot not released')),
  });
}
