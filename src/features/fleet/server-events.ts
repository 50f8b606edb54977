import type { BackgroundTask } from '../../coordination/index.js';
import type { Deps } from '../../deps.js';
import { raiseEvent } from '../notifications/index.js';
import type { ServersParts } from '../servers/index.js';

/**
 * Servers that fail to start, and starts that give up, as webhook events. Every replica's cache
 * sees the same transition; the event's key (server, kind, resource version) makes the outbox keep
 * it once. A failed write is logged: the metrics still count the transition.
 */
export function serverEventsTask(deps: Pick<Deps, 'database' | 'cluster' | 'config' | 'clock' | 'log'> & ServersParts): BackgroundTask {
  let stop: (() => void) | undefined;
  const pending = new Set<Promise<unknown>>();
  const raise = (event: Parameters<typeof raiseEvent>[1]) => {
    const write = raiseEvent(deps.database.db, event)
      .catch((err: unknown) => deps.log.warn({ err, event: event.type, subject: event.subject.id }, 'webhook event not queued'))
      .finally(() => pending.delete(write));
    pending.add(write);
  };
  return {
    name: 'server_events',
    start() {
      stop = deps.serverCache.onChange((before, after) => {
        if (!before || !after) return;
        const name = after.spec.name;
        const data = { server: name, auto_restarts: after.status.autoRestarts, desired_state: after.spec.desiredState ?? 'Stopped' };
        if (after.status.startGaveUp && !before.status.startGaveUp) {
          raise({
            type: 'server.start_gave_up',
            at: deps.clock.now(),
            key: `server.start_gave_up:${name}:${after.resourceVersion}`,
            summary: `${name} failed to start and will not be retried automatically; its owner can retry from the panel.`,
            subject: { kind: 'server', id: name },
            data,
          });
        } else if (after.status.phase === 'Failed' && before.status.phase !== 'Failed') {
          raise({
            type: 'server.start_failed',
            at: deps.clock.now(),
            key: `server.start_failed:${name}:${after.resourceVersion}`,
            summary: `${name} failed to start.`,
            subject: { kind: 'server', id: name },
            data,
          });
        }
      });
    },
    async stop() {
      stop?.();
      await Promise.all([...pending]);
    },
  };
}
