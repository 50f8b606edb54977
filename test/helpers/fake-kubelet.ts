import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

interface Line {
  time: Date;
  line: string;
}

/**
 * The one part of a kubelet a real API server can be pointed at: its container-log endpoint
 * (`/containerLogs/<ns>/<pod>/<container>`, with `follow`, `sinceTime`, `tailLines`,
 * `timestamps`), on HTTPS with a certificate of its own, behind a Node whose `kubeletEndpoint`
 * names it. The API server proxies a pod log request to the pod's node, and it does not check the
 * kubelet's certificate when `--kubelet-certificate-authority` is unset (envtest's case), so
 * `GET …/pods/<pod>/log` on the real server reaches this. The test writes the container's lines.
 */
export class FakeKubelet {
  readonly #lines = new Map<string, Line[]>();
  readonly #followers = new Map<string, Set<(line: Line | undefined) => void>>();
  readonly #states = new Map<string, 'waiting' | 'running' | 'terminated'>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeKubelet> {
    const dir = mkdtempSync(join(tmpdir(), 'felis-kubelet-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
      const server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const kubelet = new FakeKubelet(server, (server.address() as AddressInfo).port);
      server.on('request', (req, res) => kubelet.#serve(new URL(req.url ?? '/', 'https://kubelet'), res));
      return kubelet;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** A Ready node whose kubelet is this one, for pods to be bound to (`spec.nodeName`). */
  async registerNode(admin: KubeConfig, name: string): Promise<void> {
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNode({ body: { metadata: { name } } });
    const node = await core.readNode({ name });
    await core.replaceNodeStatus({
      name,
      body: {
        ...node,
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
          daemonEndpoints: { kubeletEndpoint: { Port: this.port } },
        },
      },
    });
  }

  /**
   * A container's state as this kubelet knows it (running when never set): a waiting one's log is
   * refused with 400, as a kubelet does; a terminated one's log is what it wrote, and a followed
   * read of it ends.
   */
  setState(namespace: string, pod: string, container: string, state: 'waiting' | 'running' | 'terminated'): void {
    const key = `${namespace}/${pod}/${container}`;
    this.#states.set(key, state);
    if (state === 'terminated') for (const follower of this.#followers.get(key) ?? []) follower(undefined);
  }

  /** The container writes a line (seen by followers at once). */
  appendLog(namespace: string, pod: string, container: string, line: string, time = new Date()): void {
    const key = `${namespace}/${pod}/${container}`;
    const entry = { time, line };
    this.#lines.set(key, [...(this.#lines.get(key) ?? []), entry]);
    for (const follower of this.#followers.get(key) ?? []) follower(entry);
  }

  async close(): Promise<void> {
    for (const followers of this.#followers.values()) for (const follower of followers) follower(undefined);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  #serve(url: URL, res: import('node:http').ServerResponse): void {
    const match = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (!match) {
      res.writeHead(404).end('not found');
      return;
    }
    const key = `${match[1]}/${match[2]}/${match[3]}`;
    const state = this.#states.get(key) ?? 'running';
    if (state === 'waiting') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`container "${match[3]}" in pod "${match[2]}" is waiting to start: ContainerCreating`);
      return;
    }
    const timestamps = url.searchParams.get('timestamps') === 'true';
    const sinceTime = url.searchParams.get('sinceTime');
    const since = sinceTime ? Date.parse(sinceTime) : -Infinity;
    const tail = Number(url.searchParams.get('tailLines') ?? NaN);
    // RFC3339Nano as a kubelet writes it.
    const format = ({ time, line }: Line) => (timestamps ? `${time.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z')} ${line}\n` : `${line}\n`);
    const kept = (this.#lines.get(key) ?? []).filter((l) => l.time.getTime() >= since);
    res.writeHead(200, { 'content-type': 'text/plain' });
    for (const line of Number.isInteger(tail) && !sinceTime ? kept.slice(Math.max(0, kept.length - tail)) : kept) res.write(format(line));
    if (url.searchParams.get('follow') !== 'true' || state === 'terminated') {
      res.end();
      return;
    }
    const followers = this.#followers.get(key) ?? new Set();
    this.#followers.set(key, followers);
    const follower = (line: Line | undefined) => (line ? res.write(format(line)) : res.end());
    followers.add(follower);
    res.on('close', () => followers.delete(follower));
  }
}
