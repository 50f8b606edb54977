import type { Deps } from '../../deps.js';
import type { SessionContext } from '../../http/session.js';
import { DomainError } from '../../lib/errors.js';
import { mayAct, type ServersParts } from '../servers/index.js';
import { RESUME_WINDOW_MS } from './log-hub.js';
import { resumePosition } from './event-ids.js';
import { consoleServer } from './service.js';
import { consoleSse, type Recheck } from './sse.js';
import { takeStreamSlot } from './stream-slots.js';
import type { ConsoleParts } from './log-hub.js';

/** A running pod (booting, serving or shutting down) has a log to read. */
const HAS_POD = new Set(['Starting', 'Running', 'Stopping']);

type StreamDeps = Pick<Deps & ConsoleParts, 'cluster' | 'config' | 'database' | 'clock' | 'log' | 'rcon' | 'consoleLogs' | 'shutdown'> & ServersParts;

export interface ConsoleStreamRequest {
  session: SessionContext;
  name: string;
  /** The client's Last-Event-ID when it reconnects. */
  lastEventId: string | undefined;
  /** Aborted once the client has gone. */
  signal: AbortSignal;
  /**
   * The request's session as it is now, for the re-checks: undefined once it is refused; throws
   * when it cannot be told (the stream then goes on).
   */
  currentSession: () => Promise<SessionContext | undefined>;
}

/**
 * A viewer's stream of the server's pod log, for whoever the access rule admits to `console.read`: one of the account's stream
 * slots, the server's shared log hub, and a re-check of the access every minute.
 */
export async function openConsoleStream(deps: StreamDeps, request: ConsoleStreamRequest): Promise<ReadableStream<Uint8Array>> {
  const { session, name } = request;
  const server = await consoleServer(deps, name, session, 'console.read');
  if (!HAS_POD.has(server.resource.status.phase)) throw new DomainError('not_running', `${name} is not running; wake it first.`);
  const hubs = deps.consoleLogs;
  hubs.endOn(deps.shutdown);
  if (hubs.closing) throw new DomainError('unavailable', 'The service is shutting down; reconnect in a moment.');
  const slot = await takeStreamSlot(deps, session.userId, 'console', name, hubs.timings.recheckMs * 2);
  let hub = hubs.hub(name);
  await hub.ready;
  if (hub.ended) {
    hub = hubs.hub(name);
    await hub.ready;
  }
  if (hub.ended || request.signal.aborted) {
    hub.closeIfIdle();
    await slot.release();
    if (hub.failed) throw new DomainError('unavailable', `${name}'s log cannot be read from the cluster now; try again in a moment.`);
    throw new DomainError('not_running', `${name} runs no pod to read.`);
  }
  const recheck: Recheck = async () => {
    try {
      const current = await request.currentSession();
      if (!current || !(await mayAct(deps, name, current, 'console.read'))) return 'revoked';
      await slot.renew();
      return 'allowed';
    } catch {
      return 'unknown';
    }
  };
  const changes = deps.accessChanges;
  return consoleSse({
    hub,
    resumeAfter: resumePosition(request.lastEventId, deps.clock.now().getTime(), RESUME_WINDOW_MS),
    timings: hubs.timings,
    recheck,
    // A member removed (or its permissions changed) is checked again at once, not at the next minute.
    recheckOn: changes ? (run) => changes.watch(name, run) : undefined,
    onClose: () => void slot.release().catch((err: Error) => deps.log.warn({ err: err.message }, 'stream slot not released')),
  });
}
