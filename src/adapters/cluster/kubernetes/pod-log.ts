import { ApiException, HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';
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
 *
 * The request is the client's own (its authentication and TLS through RequestContext), read as
 * the fetch body it is: the client's `Log` pipes a stream whose abort error nobody listens for.
 */
/**
 * How long the API server (and through it the node's kubelet) has to start answering a log
 * request: the service's own deadline, far below the API server's proxy time-out, so a silent
 * kubelet is a prompt fault rather than a console that waits.
 */
export const POD_LOG_ANSWER_MS = 5_000;

export async function* followPodLog(
  kubeConfig: KubeConfig,
  namespace: string,
  pod: string,
  container: string,
  options: PodLogOptions,
  answerWithinMs = POD_LOG_ANSWER_MS,
): AsyncGenerator<PodLogLine> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  const url = new URL(`${cluster.server}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`);
  url.searchParams.set('container', container);
  url.searchParams.set('timestamps', 'true');
  if (options.follow) url.searchParams.set('follow', 'true');
  // The API's times are whole seconds (metav1.Time), so sinceTime is sent as one.
  if (options.sinceTime) url.searchParams.set('sinceTime', options.sinceTime.toISOString().replace(/\.\d+Z$/, 'Z'));
  else if (options.tailLines !== undefined) url.searchParams.set('tailLines', String(options.tailLines));
  const context = new RequestContext(url.toString(), HttpMethod.GET);
  await kubeConfig.applySecurityAuthentication(context);
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (options.signal.aborted) return;
  options.signal.addEventListener('abort', abort, { once: true });
  try {
    let response: Awaited<ReturnType<typeof fetch>>;
    let late = false;
    const deadline = setTimeout(() => {
      late = true;
      controller.abort();
    }, answerWithinMs);
    try {
      // undici's own fetch, the one whose dispatcher (the kubeconfig's TLS) the client makes.
      response = await fetch(url, { headers: context.getHeaders(), dispatcher: context.getDispatcher(), signal: controller.signal });
    } catch (err) {
      if (late) throw new ApiException(503, `pod log of ${pod}: no answer within ${answerWithinMs} ms (the node's kubelet is silent)`, undefined, {});
      if (controller.signal.aborted) return;
      throw new ApiException(503, `pod log of ${pod}: ${(err as Error).message}`, undefined, {});
    } finally {
      clearTimeout(deadline);
    }
    if (response.status !== 200 || !response.body) {
      const body = (await response.json().catch(() => undefined)) as { code?: number; message?: string } | undefined;
      // 404: no pod; 400: its container is not running yet (ContainerCreating, waiting to start).
      if (response.status === 404 || response.status === 400) {
        throw new ClusterNoPodError(`pod ${pod} has no running container`, { cause: new ApiException(response.status, body?.message ?? 'pod log', body, {}) });
      }
      throw new ApiException(response.status, body?.message ?? 'Error occurred in log request', body, {});
    }
    try {
      for await (const text of newlineSeparated(response.body)) {
        const line = parseStampedLine(text);
        if (line) yield line;
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
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
async function* newlineSeparated(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
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
