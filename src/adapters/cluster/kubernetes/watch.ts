import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchedObject {
  metadata?: { resourceVersion?: string; name?: string };
}

export interface ResumableWatchOptions<T> {
  kubeConfig: KubeConfig;
  /** The collection's path, such as `/apis/felis.dev/v1alpha1/namespaces/felis/minecraftservers`. */
  path: string;
  query?: Record<string, string>;
  /** The list's resourceVersion: the watch misses nothing after it. */
  fromVersion: string;
  onEvent(type: WatchEventType, object: T): void;
  /** The version is too old (410 Gone): the caller must list again. The watch has ended. */
  onExpired(err: Error): void;
  log?: Logger;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface ResumableWatch {
  stop(): void;
  /** The last version seen (an event or a bookmark). */
  readonly version: string;
}

const QUICK_END_MS = 1_000;

class WatchExpiredError extends Error {
  override name = 'WatchExpiredError';
}

/**
 * A watch that outlives its connection: when the stream ends or fails it resumes from the last
 * version it saw (events and bookmarks both move it), after a doubling back-off while failures
 * repeat; so a dropped connection loses no update. Only 410 Gone ends it, through `onExpired`.
 */
export function resumableWatch<T extends WatchedObject>(options: ResumableWatchOptions<T>): ResumableWatch {
  const watch = new Watch(options.kubeConfig);
  const initialBackoff = options.initialBackoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  let version = options.fromVersion;
  let stopped = false;
  let backoff = 0;
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;

  const expire = (err: Error) => {
    if (stopped) return;
    stopped = true;
    controller?.abort();
    options.onExpired(err);
  };

  const connect = () => {
    if (stopped) return;
    let ended = false;
    let sawEvent = false;
    const openedAt = Date.now();
    const onDone = (err: unknown) => {
      if (ended || stopped) return;
      ended = true;
      const status = (err as { statusCode?: number; code?: number } | null)?.statusCode;
      if (status === 410) return expire(new WatchExpiredError(`watch of ${options.path} expired`));
      // A clean end after a while (the server's watch time-out) resumes at once; failures, and a
      // stream that ends as soon as it opens, back off, doubling.
      const failed = err || (Date.now() - openedAt < QUICK_END_MS && !sawEvent);
      backoff = failed ? Math.min(maxBackoff, backoff === 0 ? initialBackoff : backoff * 2) : 0;
      if (err) options.log?.warn({ err, path: options.path, retry_ms: backoff }, 'cluster watch failed; resuming');
      timer = setTimeout(connect, backoff);
      timer.unref();
    };
    const query = { ...options.query, resourceVersion: version, allowWatchBookmarks: 'true' };
    watch
      .watch(
        options.path,
        query,
        (type: string, object: T & { code?: number; message?: string }) => {
          if (stopped || ended) return;
          if (type === 'ERROR') {
            if (object.code === 410) expire(new WatchExpiredError(object.message ?? 'resource version expired'));
            else onDone(new Error(object.message ?? 'watch error event'));
            return;
          }
          const next = object.metadata?.resourceVersion;
          if (next) version = next;
          sawEvent = true;
          backoff = 0;
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') options.onEvent(type, object);
        },
        onDone,
      )
      .then((c) => {
        controller = c;
        if (stopped || ended) c.abort();
      })
      .catch(onDone);
  };

  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
    },
    get version() {
      return version;
    },
  };
}
