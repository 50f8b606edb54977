import { request as httpRequest } from 'node:http';

export interface Exchanged {
  status: number;
  text: string;
  /** The body as JSON (`{}` when empty). */
  body: Record<string, unknown>;
  setCookie: string[];
}

/**
 * A real HTTP exchange on 127.0.0.1 with the Host a browser or the proxy would name (fetch may not
 * set Host). A body is sent as JSON.
 */
export function exchange(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Exchanged> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { ...headers, ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const isJson = (res.headers['content-type'] ?? '').includes('json');
          resolve({
            status: res.statusCode ?? 0,
            text,
            body: isJson && text ? (JSON.parse(text) as Record<string, unknown>) : {},
            setCookie: res.headers['set-cookie'] ?? [],
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
