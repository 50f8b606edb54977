import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RegistryStandIn {
  url: string;
  host: string;
  /** `repository:tag` → the digest the stand-in serves for it. */
  push(repository: string, tag: string): string;
  /** Deletes a tag (its manifest is no longer served). */
  remove(repository: string, tag: string): void;
  /** Answer every manifest request with this status (5xx tests); undefined to serve again. */
  failWith(status: number | undefined): void;
  /** Requests seen, as `METHOD path accept authorization`. */
  requests: Array<{ method: string; path: string; accept: string | undefined; authorization: string | undefined }>;
  close(): Promise<void>;
}

export interface RegistryStandInOptions {
  /** Require a bearer token obtained from `/token` (the distribution token flow). */
  token?: string;
  /** Refuse HEAD with 405, as some registries do. */
  noHead?: boolean;
  /** Omit Docker-Content-Digest: the client must hash the manifest itself. */
  noDigestHeader?: boolean;
}

const INDEX = 'application/vnd.oci.image.index.v1+json';

/** A registry on 127.0.0.1 speaking the OCI distribution API's manifest and token endpoints. */
export async function startRegistryStandIn(options: RegistryStandInOptions = {}): Promise<RegistryStandIn> {
  const manifests = new Map<string, Buffer>();
  const requests: RegistryStandIn['requests'] = [];
  let failing: number | undefined;
  let base = '';
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    requests.push({ method: req.method ?? '', path: url.pathname, accept: req.headers.accept, authorization: req.headers.authorization });
    if (url.pathname === '/token') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ token: options.token, scope: url.searchParams.get('scope') }));
      return;
    }
    const match = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname);
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const [, repository, reference] = match;
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, {
        'WWW-Authenticate': `Bearer realm="${base}/token",service="stand-in",scope="repository:${repository}:pull"`,
        'Content-Type': 'application/json',
      });
      res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED' }] }));
      return;
    }
    if (failing) {
      res.writeHead(failing).end();
      return;
    }
    if (options.noHead && req.method === 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    const body = manifests.get(`${repository}:${reference}`) ?? [...manifests.entries()].find(([, b]) => digestOf(b) === reference)?.[1];
    if (!body || !(req.headers.accept ?? '').includes(INDEX)) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN' }] }));
      return;
    }
    const headers: Record<string, string> = { 'Content-Type': INDEX, 'Content-Length': String(body.length) };
    if (!options.noDigestHeader) headers['Docker-Content-Digest'] = digestOf(body);
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    host: `127.0.0.1:${port}`,
    push(repository, tag) {
      const body = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests: [], annotations: { repository, tag } }));
      manifests.set(`${repository}:${tag}`, body);
      return digestOf(body);
    },
    remove(repository, tag) {
      manifests.delete(`${repository}:${tag}`);
    },
    failWith(status) {
      failing = status;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function digestOf(body: Buffer): string {
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}
