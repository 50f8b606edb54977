import { connect, type Socket } from 'node:net';

export interface RawResponse {
  statusLine: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A plain TCP connection that writes exact request bytes and parses HTTP/1.1 answers from it. */
export class RawConnection {
  readonly socket: Socket;
  #buffer = Buffer.alloc(0);
  #waiters: Array<() => void> = [];
  #closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
    socket.on('error', () => {});
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(data: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  /** Resolves once the server has closed the connection. */
  async whenClosed(): Promise<void> {
    while (!this.#closed) await this.#next();
  }

  /** Reads one complete answer (Content-Length or chunked); rejects if the connection closes first. */
  async readResponse(): Promise<RawResponse> {
    for (;;) {
      const parsed = this.#tryParse();
      if (parsed) return parsed;
      if (this.#closed) throw new Error(`connection closed before a full answer: ${JSON.stringify(this.#buffer.toString())}`);
      await this.#next();
    }
  }

  close(): void {
    this.socket.destroy();
  }

  #next(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  #tryParse(): RawResponse | undefined {
    const end = this.#buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...headerLines] = this.#buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const rest = this.#buffer.subarray(end + 4);
    let body: Buffer;
    let consumed: number;
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      let offset = 0;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', offset);
        if (lineEnd < 0) return undefined;
        const size = parseInt(rest.subarray(offset, lineEnd).toString(), 16);
        if (rest.length < lineEnd + 2 + size + 2) return undefined;
        if (size === 0) {
          consumed = lineEnd + 4;
          break;
        }
        parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        offset = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < length) return undefined;
      body = rest.subarray(0, length);
      consumed = length;
    }
    this.#buffer = rest.subarray(consumed);
    return { statusLine: statusLine!, status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8') };
  }
}

/** The request head the proxy's Java 17 `java.net.http` client writes (DESIGN.md, "The real clients"). */
export function javaClientRequest(options: {
  method: string;
  path: string;
  port: number;
  token: string;
  body?: string;
}): string {
  const body = options.body ?? '';
  const lines = [
    `${options.method} ${options.path} HTTP/1.1`,
    'Connection: Upgrade, HTTP2-Settings',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Host: 127.0.0.1:${options.port}`,
    'HTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA',
    'Upgrade: h2c',
    'User-Agent: Java-http-client/17.0.12',
    'Accept: application/json',
    `Authorization: Bearer ${options.token}`,
  ];
  if (body) lines.push('Content-Type: application/json');
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
