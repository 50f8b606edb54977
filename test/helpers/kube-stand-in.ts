import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP stand-in of the Kubernetes API server on 127.0.0.1, for what the real one
 * (test/helpers/envtest.ts, with no kubelet) cannot be made to show: a failure injected into one
 * request (`failNext`), and containers' logs (`follow`, `sinceTime`, `timestamps`) that a test
 * writes line by line, with the pods and Jobs around them (`endJob`, `setContainerState`). It speaks
 * enough of the wire format for the suites that need those (resource paths, lists, watches from a
 * version, 409 on a stale `metadata.resourceVersion`, merge patches, the status
 * subresource). Everything else the adapter does is tested against the real API server:
 * create, watch, conflicts, 410 Gone after compaction, server-side apply, RBAC, a dropped watch.
 */

type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    creationTimestamp?: string;
    generation?: number;
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
};

interface Collection {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

interface StoredEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  rv: number;
}

interface Watcher {
  key: string;
  namespace: string | undefined;
  selector: Selector;
  fieldName: string | undefined;
  res: ServerResponse;
}

interface LogLine {
  time: Date;
  line: string;
}

const BUILT_IN: Collection[] = [
  { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true },
  { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', version: 'v1', plural: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true },
  { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  { group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'StatefulSet', namespaced: true },
  { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job', namespaced: true },
];

const apiVersionOf = (c: Collection) => (c.group ? `${c.group}/${c.version}` : c.version);
const collectionKey = (c: Collection) => `${c.group}/${c.plural}`;
const objectKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;
const logKey = (podKey: string, container: string) => `${podKey}#${container}`;

/** A container's state as the pod's statuses tell it; undefined when they do not name it. */
function containerStateOf(pod: KubeObject, container: string): 'waiting' | 'running' | 'terminated' | undefined {
  const status = pod.status as { initContainerStatuses?: ContainerStatus[]; containerStatuses?: ContainerStatus[] } | undefined;
  const found = [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])].find((c) => c.name === container);
  if (!found?.state) return undefined;
  if (found.state.terminated) return 'terminated';
  return found.state.running ? 'running' : 'waiting';
}
type ContainerStatus = { name: string; state?: { running?: unknown; terminated?: unknown; waiting?: unknown } };

class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** A label selector's requirements: `key=value`, `key==value`, `key!=value`, `key` (exists), `!key`. Absent value: existence. */
type Selector = Record<string, { op: '=' | '!=' | 'exists' | '!exists'; value?: string }>;

function parseSelector(raw: string | null): Selector {
  const selector: Selector = {};
  if (!raw) return selector;
  for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const match = /^(!?)([^!=]+?)\s*(?:(!=|==|=)\s*(.*))?$/.exec(part);
    if (!match) continue;
    const [, not, key, op, value] = match;
    if (op) selector[key!] = { op: op === '!=' ? '!=' : '=', value: value!.trim() };
    else selector[key!] = { op: not ? '!exists' : 'exists' };
  }
  return selector;
}

function matches(object: KubeObject, namespace: string | undefined, selector: Selector, fieldName?: string): boolean {
  if (namespace !== undefined && object.metadata.namespace !== namespace) return false;
  if (fieldName !== undefined && object.metadata.name !== fieldName) return false;
  const labels = object.metadata.labels ?? {};
  return Object.entries(selector).every(([k, r]) => {
    switch (r.op) {
      case '=':
        return labels[k] === r.value;
      case '!=':
        return labels[k] !== r.value;
      case 'exists':
        return k in labels;
      case '!exists':
        return !(k in labels);
    }
  });
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete base[key];
    else base[key] = mergePatch(base[key], value);
  }
  return base;
}

function formatTime(time: Date): string {
  // RFC3339Nano as the kubelet writes it: nanosecond digits after the second.
  return time.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

export class KubeStandIn {
  port = 0;
  readonly #server: Server;
  readonly #collections = new Map<string, Collection>();
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  readonly #events = new Map<string, StoredEvent[]>();
  readonly #watchers = new Set<Watcher>();
  readonly #sockets = new Set<Socket>();
  readonly #logs = new Map<string, LogLine[]>();
  readonly #logFollowers = new Map<string, Set<(line: LogLine) => void>>();
  #rv = 100;
  #failNext: Array<{ method: string; pathPrefix: string; status: number }> = [];

  constructor() {
    for (const c of BUILT_IN) this.#collections.set(collectionKey(c), c);
    this.#server = createServer((req, res) => {
      void this.#handle(req, res);
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(): Promise<KubeStandIn> {
    const standIn = new KubeStandIn();
    await new Promise<void>((resolve) => standIn.#server.listen(0, '127.0.0.1', resolve));
    standIn.port = (standIn.#server.address() as AddressInfo).port;
    return standIn;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Serves a custom resource definition's collection, as applying the CRD would. */
  defineCustomResource(group: string, version: string, plural: string, kind: string): void {
    this.#collections.set(`${group}/${plural}`, { group, version, plural, kind, namespaced: true });
  }

  /** The next `count` requests of `method` under `pathPrefix` are answered with `status`. */
  failNext(method: string, pathPrefix: string, status: number, count = 1): void {
    for (let i = 0; i < count; i += 1) this.#failNext.push({ method, pathPrefix, status });
  }

  get(plural: string, namespace: string | undefined, name: string, group = this.#groupOf(plural)): KubeObject | undefined {
    const object = this.#objects.get(`${group}/${plural}`)?.get(objectKey(namespace, name));
    return object && structuredClone(object);
  }

  list(plural: string, group = this.#groupOf(plural)): KubeObject[] {
    return [...(this.#objects.get(`${group}/${plural}`)?.values() ?? [])].map((o) => structuredClone(o));
  }

  /** Creates or replaces an object as a cluster component would (no version check). */
  put(plural: string, object: KubeObject, group = this.#groupOf(plural)): KubeObject {
    const c = this.#collection(`${group}/${plural}`);
    const existing = this.#store(c).get(objectKey(object.metadata.namespace, object.metadata.name));
    if (existing) return this.#replace(c, { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion } }, 'all');
    return this.#create(c, object.metadata.namespace, object);
  }

  remove(plural: string, namespace: string | undefined, name: string, group = this.#groupOf(plural)): void {
    const c = this.#collection(`${group}/${plural}`);
    this.#delete(c, namespace, name);
  }

  /**
   * The Job controller's and the kubelet's part when a Job's one container ends: a pod from the
   * Job's template whose container terminated with `message` (its termination message) after
   * writing `log` (its lines, stdout and stderr merged), and the Job's Complete or Failed condition
   * (`reason`, e.g. DeadlineExceeded, when it failed).
   */
  endJob(namespace: string, name: string, end: { succeeded: boolean; message?: string; reason?: string; log?: string[] }): void {
    const job = this.get('jobs', namespace, name);
    if (!job) throw new Error(`no job ${namespace}/${name}`);
    const template = (job.spec?.template ?? {}) as { metadata?: { labels?: Record<string, string> }; spec?: { containers?: Array<{ name: string }> } };
    const container = template.spec?.containers?.[0]?.name ?? 'main';
    if (end.message !== undefined || end.log !== undefined || end.reason !== 'DeadlineExceeded') {
      const podName = `${name}-${randomUUID().slice(0, 5)}`;
      for (const line of end.log ?? []) this.appendLog(namespace, podName, line, new Date(), container);
      this.put('pods', {
        metadata: { name: podName, namespace, labels: { ...template.metadata?.labels, 'job-name': name } },
        spec: structuredClone(template.spec) as Record<string, unknown>,
        status: {
          phase: end.succeeded ? 'Succeeded' : 'Failed',
          containerStatuses: [
            { name: container, ready: false, restartCount: 0, state: { terminated: { exitCode: end.succeeded ? 0 : 1, reason: end.succeeded ? 'Completed' : 'Error', ...(end.message !== undefined ? { message: end.message } : {}) } } },
          ],
        },
      });
    }
    const type = end.succeeded ? 'Complete' : 'Failed';
    job.status = {
      ...(end.succeeded ? { succeeded: 1 } : { failed: 1 }),
      conditions: [{ type, status: 'True', reason: end.reason ?? (end.succeeded ? 'Completed' : 'BackoffLimitExceeded'), lastTransitionTime: new Date().toISOString() }],
    };
    this.put('jobs', job);
  }

  /** The container writes a line (seen by `log?follow=true` readers at once). */
  appendLog(namespace: string, pod: string, line: string, time = new Date(), container = 'server'): void {
    const key = logKey(objectKey(namespace, pod), container);
    const entry = { time, line };
    const lines = this.#logs.get(key) ?? [];
    lines.push(entry);
    this.#logs.set(key, lines);
    for (const follower of this.#logFollowers.get(key) ?? []) follower(entry);
  }

  #endFollowers(key: string): void {
    for (const follower of this.#logFollowers.get(key) ?? []) follower({ time: new Date(0), line: '\u0000end' });
  }

  #groupOf(plural: string): string {
    for (const c of this.#collections.values()) if (c.plural === plural) return c.group;
    throw new Error(`unknown resource ${plural}`);
  }

  #collection(key: string): Collection {
    const c = this.#collections.get(key);
    if (!c) throw new StatusError(404, 'NotFound', `the server could not find the requested resource (${key})`);
    return c;
  }

  #store(c: Collection): Map<string, KubeObject> {
    const key = collectionKey(c);
    let store = this.#objects.get(key);
    if (!store) {
      store = new Map();
      this.#objects.set(key, store);
    }
    return store;
  }

  #record(c: Collection, type: StoredEvent['type'], object: KubeObject): void {
    const key = collectionKey(c);
    const events = this.#events.get(key) ?? [];
    const rv = Number(object.metadata.resourceVersion);
    events.push({ type, object: structuredClone(object), rv });
    this.#events.set(key, events);
    for (const watcher of this.#watchers) {
      if (watcher.key === key && matches(object, watcher.namespace, watcher.selector, watcher.fieldName)) {
        this.#write(watcher, { type, object });
      }
    }
  }

  #create(c: Collection, namespace: string | undefined, body: KubeObject): KubeObject {
    body = storedForm(c, body);
    const name = body.metadata?.name;
    if (!name) throw new StatusError(422, 'Invalid', 'metadata.name: Required value');
    const store = this.#store(c);
    const key = objectKey(namespace, name);
    if (store.has(key)) throw new StatusError(409, 'AlreadyExists', `${c.plural} "${name}" already exists`);
    const object: KubeObject = {
      ...structuredClone(body),
      apiVersion: apiVersionOf(c),
      kind: c.kind,
      metadata: {
        ...structuredClone(body.metadata),
        ...(c.namespaced ? { namespace } : {}),
        uid: randomUUID(),
        resourceVersion: String(++this.#rv),
        creationTimestamp: new Date().toISOString(),
        generation: 1,
      },
    };
    store.set(key, object);
    this.#record(c, 'ADDED', object);
    return object;
  }

  /**
   * Replaces an object; a body with a resourceVersion that is not the current one gets 409. The
   * status subresource writes only status, the main resource of a custom resource never writes it,
   * and `all` (a test's own write) writes both.
   */
  #replace(c: Collection, body: KubeObject, subresource?: 'status' | 'all'): KubeObject {
    body = storedForm(c, body);
    const store = this.#store(c);
    const key = objectKey(body.metadata.namespace, body.metadata.name);
    const existing = store.get(key);
    if (!existing) throw new StatusError(404, 'NotFound', `${c.plural} "${body.metadata.name}" not found`);
    const sent = body.metadata.resourceVersion;
    if (sent !== undefined && sent !== existing.metadata.resourceVersion) {
      throw new StatusError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${c.plural} "${body.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const next: KubeObject =
      subresource === 'status'
        ? { ...existing, status: body.status }
        : { ...body, ...(subresource !== 'all' && this.#hasStatusSubresource(c) ? { status: existing.status } : {}) };
    const specChanged = JSON.stringify(next.spec) !== JSON.stringify(existing.spec);
    next.apiVersion = apiVersionOf(c);
    next.kind = c.kind;
    next.metadata = {
      ...next.metadata,
      uid: existing.metadata.uid,
      namespace: existing.metadata.namespace,
      creationTimestamp: existing.metadata.creationTimestamp,
      generation: (existing.metadata.generation ?? 1) + (specChanged ? 1 : 0),
      resourceVersion: String(++this.#rv),
    };
    if (!c.namespaced) delete next.metadata.namespace;
    store.set(key, next);
    this.#record(c, 'MODIFIED', next);
    return next;
  }

  #hasStatusSubresource(c: Collection): boolean {
    return !BUILT_IN.includes(c);
  }

  #delete(c: Collection, namespace: string | undefined, name: string): KubeObject {
    const store = this.#store(c);
    const key = objectKey(namespace, name);
    const existing = store.get(key);
    if (!existing) throw new StatusError(404, 'NotFound', `${c.plural} "${name}" not found`);
    store.delete(key);
    const gone = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.#rv) } };
    this.#record(c, 'DELETED', gone);
    if (c.plural === 'pods') {
      for (const stream of [...this.#logs.keys(), ...this.#logFollowers.keys()].filter((k) => k.startsWith(`${key}#`))) {
        this.#endFollowers(stream);
        this.#logs.delete(stream);
      }
    }
    return gone;
  }

  #write(watcher: Watcher, event: unknown): void {
    watcher.res.write(JSON.stringify(event) + '\n');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    try {
      const failure = this.#failNext.findIndex((f) => f.method === req.method && url.pathname.startsWith(f.pathPrefix));
      if (failure >= 0) {
        const [f] = this.#failNext.splice(failure, 1);
        throw new StatusError(f!.status, f!.status === 409 ? 'Conflict' : 'InternalError', `injected ${f!.status}`);
      }
      const body = req.method === 'GET' || req.method === 'DELETE' ? undefined : await readJson(req);
      this.#route(req, res, url, body);
    } catch (err) {
      const status = err instanceof StatusError ? err : new StatusError(500, 'InternalError', String(err));
      if (!res.headersSent) {
        res.writeHead(status.code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(statusObject(status)));
      } else res.end();
    }
  }

  #route(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown): void {
    // /api/v1/... or /apis/<group>/<version>/..., then [namespaces/<ns>/]<plural>[/<name>[/<sub>]]
    const parts = url.pathname.split('/').filter(Boolean);
    let group: string;
    let rest: string[];
    if (parts[0] === 'api' && parts[1] === 'v1') {
      group = '';
      rest = parts.slice(2);
    } else if (parts[0] === 'apis' && parts.length >= 3) {
      group = parts[1]!;
      rest = parts.slice(3);
    } else throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, sub] = rest;
    const c = this.#collection(`${group}/${plural}`);
    const method = req.method ?? 'GET';
    if (!name) {
      if (method === 'GET' && url.searchParams.get('watch') === 'true') return this.#watch(c, namespace, url, res);
      if (method === 'GET') return this.#list(c, namespace, url, res);
      if (method === 'POST') return send(res, 201, this.#create(c, namespace, body as KubeObject));
      throw new StatusError(405, 'MethodNotAllowed', `${method} is not supported`);
    }
    if (sub === 'log' && c.plural === 'pods' && method === 'GET') return this.#log(namespace, name, url, res);
    if (sub !== undefined && sub !== 'status') throw new StatusError(404, 'NotFound', `no subresource ${sub}`);
    const existing = this.#store(c).get(objectKey(namespace, name));
    if (method === 'GET') {
      if (!existing) throw new StatusError(404, 'NotFound', `${c.plural} "${name}" not found`);
      return send(res, 200, existing);
    }
    if (method === 'DELETE') return send(res, 200, this.#delete(c, namespace, name));
    if (method === 'PUT') {
      const object = body as KubeObject;
      if (object.metadata?.name !== name) throw new StatusError(400, 'BadRequest', 'the name in the body does not match the URL');
      return send(res, 200, this.#replace(c, { ...object, metadata: { ...object.metadata, namespace } }, sub as 'status' | undefined));
    }
    if (method === 'PATCH') {
      if (!existing) throw new StatusError(404, 'NotFound', `${c.plural} "${name}" not found`);
      const type = String(req.headers['content-type'] ?? '').split(';')[0];
      let next: KubeObject;
      if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') {
        next = mergePatch(existing, body) as KubeObject;
        // A merge patch carries a resourceVersion only when the client wants the precondition.
        const sent = (body as KubeObject).metadata?.resourceVersion;
        next.metadata.resourceVersion = sent ?? existing.metadata.resourceVersion;
      } else throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format: ${type}`);
      return send(res, 200, this.#replace(c, next, sub as 'status' | undefined));
    }
    throw new StatusError(405, 'MethodNotAllowed', `${method} is not supported`);
  }

  #list(c: Collection, namespace: string | undefined, url: URL, res: ServerResponse): void {
    const selector = parseSelector(url.searchParams.get('labelSelector'));
    const items = [...this.#store(c).values()].filter((o) => matches(o, namespace, selector));
    send(res, 200, {
      apiVersion: apiVersionOf(c),
      kind: `${c.kind}List`,
      metadata: { resourceVersion: String(this.#rv) },
      items,
    });
  }

  #watch(c: Collection, namespace: string | undefined, url: URL, res: ServerResponse): void {
    const key = collectionKey(c);
    const fieldSelector = url.searchParams.get('fieldSelector');
    const watcher: Watcher = {
      key,
      namespace,
      selector: parseSelector(url.searchParams.get('labelSelector')),
      fieldName: fieldSelector?.startsWith('metadata.name=') ? fieldSelector.slice('metadata.name='.length) : undefined,
      res,
    };
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const from = url.searchParams.get('resourceVersion');
    if (from && from !== '0') {
      const since = Number(from);
      for (const event of this.#events.get(key) ?? []) {
        if (event.rv > since && matches(event.object, namespace, watcher.selector, watcher.fieldName)) {
          this.#write(watcher, { type: event.type, object: event.object });
        }
      }
    } else {
      for (const object of this.#store(c).values()) {
        if (matches(object, namespace, watcher.selector, watcher.fieldName)) this.#write(watcher, { type: 'ADDED', object });
      }
    }
    this.#watchers.add(watcher);
    res.on('close', () => this.#watchers.delete(watcher));
  }

  #log(namespace: string | undefined, name: string, url: URL, res: ServerResponse): void {
    const pod = this.#store(this.#collection('/pods')).get(objectKey(namespace, name));
    if (!pod) throw new StatusError(404, 'NotFound', `pods "${name}" not found`);
    const container = url.searchParams.get('container') ?? 'server';
    const state = containerStateOf(pod, container);
    if (state === 'waiting' || (state === undefined && pod.status?.phase !== 'Running')) {
      throw new StatusError(400, 'BadRequest', `container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
    }
    const key = logKey(objectKey(namespace, name), container);
    const sinceTime = url.searchParams.get('sinceTime');
    const since = sinceTime ? Date.parse(sinceTime) : -Infinity;
    const timestamps = url.searchParams.get('timestamps') === 'true';
    const format = (entry: LogLine) => (timestamps ? `${formatTime(entry.time)} ${entry.line}\n` : `${entry.line}\n`);
    res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
    const tail = Number(url.searchParams.get('tailLines') ?? NaN);
    const kept = (this.#logs.get(key) ?? []).filter((entry) => entry.time.getTime() >= since);
    for (const entry of Number.isInteger(tail) && !sinceTime ? kept.slice(Math.max(0, kept.length - tail)) : kept) res.write(format(entry));
    if (url.searchParams.get('follow') !== 'true' || state === 'terminated') {
      res.end();
      return;
    }
    const followers = this.#logFollowers.get(key) ?? new Set();
    this.#logFollowers.set(key, followers);
    const follower = (entry: LogLine) => {
      if (entry.line === '\u0000end') res.end();
      else res.write(format(entry));
    };
    followers.add(follower);
    res.on('close', () => followers.delete(follower));
  }
}

/** A Secret's write-only `stringData` is stored base64-encoded under `data`, as the API server does. */
function storedForm(c: Collection, body: KubeObject): KubeObject {
  if (c.plural !== 'secrets' || !body.stringData) return body;
  const { stringData, ...rest } = body as KubeObject & { stringData: Record<string, string>; data?: Record<string, string> };
  const data = { ...rest.data };
  for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(value, 'utf8').toString('base64');
  return { ...rest, data };
}

function statusObject(err: StatusError): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: err.reason, code: err.code };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new StatusError(400, 'BadRequest', 'the body is not JSON');
  }
}
