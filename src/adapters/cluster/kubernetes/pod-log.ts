import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { Log, type KubeConfig } from '@kubernetes/client-node';
import type { PodLogLine, PodLogOptions } from '../types.js';

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
  const controller = await new Log(kubeConfig).log(namespace, pod, container, sink, {
    follow: options.follow ?? false,
    timestamps: true,
    ...(options.sinceTime ? { sinceTime: options.sinceTime.toISOString() } : {}),
  });
  const abort = () => {
    controller.abort();
    sink.end();
  };
  if (options.signal?.aborted) abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    for await (const text of createInterface({ input: sink, crlfDelay: Infinity })) {
      const line = parseStampedLine(text);
      if (line) yield line;
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    controller.abort();
  }
}
