import { PassThrough } from 'node:stream';
import { ApiException, Log, type KubeConfig } from '@kubernetes/client-node';
import { ClusterNoPodError, type PodLogLine, type PodLogOptions } from '../types.js';

/** `2026-01-01T00:00:00.123456789Z line`: the runtime's RFC3339Nano stamp, then the line. */
const STAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2}) (.*)$/s;

export function parseStampedLine(text: string): PodLogLine | undefined {
  const match = STAMPED.exec(text);
  if (!match) return undefined;
  // Date keeps milliseconds: the nanosecond digits beyond them are dropped.
  const fraction = (match[2] ?? '').slice(0, 4);
  const time = new Date(`${match[1]}${fraction}${match[3]}`);
  return Number.isNaN(time.getTime()) ? undefined : { time, line: match[4]! };
}

/**
 * A pod's log as stamped lines (`timestamps=true`), from `sinceTime` when given, following new
 * lines when asked. The iteration ends when the pod's stream ends or `signal` aborts.
 */
export async function* followPodLog(
  kubeConfig: KubeConfig,
  namespace: string,
  pod: string,
  container: string,
  options: PodLogOptions,
): AsyncGenerator<PodLogLine> {
  const sink = new PassThrough();
  let controller: AbortController;
  try {
    controller = await new Log(kubeConfig).log(namespace, pod, container, sink, {
      follow: options.follow,
      timestamps: true,
      // The API's times are whole seconds (metav1.Time), so sinceTime is sent as one.
      ...(options.sinceTime ? { sinceTime: options.sinceTime.toISOString().replace(/\.\d+Z$/, 'Z') } : {}),
      ...(!options.sinceTime && options.tailLines !== undefined ? { tailLines: options.tailLines } : {}),
    });
  } catch (err) {
    // 404: no pod; 400: its container is not running yet (ContainerCreating, waiting to start).
    if (err instanceof ApiException && (err.code === 404 || err.code === 400)) {
      throw new ClusterNoPodError(`pod ${pod} has no running container`, { cause: err });
    }
    throw err;
  }
  const abort = () => {
    controller.abort();
    sink.end();
  };
  if (options.signal.aborted) abort();
  options.signal.addEventListener('abort', abort, { once: true });
  try {
    for await (const text of newlineSeparated(sink)) {
      const line = parseStampedLine(text);
      if (line) yield line;
    }
  } finally {
    options.signal.removeEventListener('abort', abort);
    controller.abort();
  }
}

/**
 * The lines of a log as the runtime stamps them: split on `\n` only. A lone `\r` (a progress
 * bar) belongs to the stamped line, where readline would make an unstamped line of what follows.
 */
async function* newlineSeparated(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop()!;
    yield* lines;
  }
  pending += decoder.decode();
  if (pending !== '') yield pending;
}
