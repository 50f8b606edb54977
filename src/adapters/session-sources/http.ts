import http from 'node:http';
import https from 'node:https';

/**
 * How a GET to a session source ended: a 2xx JSON body, one of the caller's "no" statuses (body
 * ignored), or a failure.
 */
export type SourceResponse =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'empty'; status: number }
  | { kind: 'failed'; reason: FailureReason; detail: string };

export type FailureReason = 'transport' | 'timeout' | 'redirect' | 'status' | 'malformed';

/** A profile with textures is about 2 KiB; anything far larger is not a session server talking. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'felis/4.1.0 (session verifier)';

/**
 * A keep-alive HTTP client for the session sources. node:http rather than fetch: it never follows
 * a redirect (a redirect is a failure by contract), its Agent keeps connections open between
 * logins without an extra dependency, and a timer bounds each request.
 */
export class SessionSourceHttp {
  readonly #http = new http.Agent({ keepAlive: true, scheduling: 'lifo' });
  readonly #https = new https.Agent({ keepAlive: true, scheduling: 'lifo' });

  constructor(readonly timeoutMs: number) {}

  /**
   * GETs `url` within the time-out. A status in `emptyStatuses` is `empty`; another 2xx must carry
   * JSON; 3xx is a redirect failure; any other status is a status failure.
   */
  get(url: URL, emptyStatuses: readonly number[]): Promise<SourceResponse> {
    const client = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? this.#https : this.#http;
    return new Promise<SourceResponse>((settle) => {
      // A plain timer rather than AbortSignal.timeout(): it is cleared the moment the answer is
      // in, and it bounds the whole exchange (connect, headers and body), not socket idleness.
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const resolve = (response: SourceResponse) => {
        clearTimeout(timer);
        settle(response);
      };
      const fail = (reason: FailureReason, detail: string) => resolve({ kind: 'failed', reason, detail });
      const transportFailure = (err: Error) => fail(timedOut ? 'timeout' : 'transport', err.message);
      const req = client.get(url, { agent, headers: { Accept: 'application/json', 'User-Agent': USER_AGENT } }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.resume();
          return fail('redirect', `redirect ${status} to ${res.headers.location ?? '(no location)'}`);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            fail('malformed', `response over ${MAX_RESPONSE_BYTES} bytes`);
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', transportFailure);
        res.on('end', () => {
          if (emptyStatuses.includes(status)) return resolve({ kind: 'empty', status });
          if (status < 200 || status >= 300) return fail('status', `status ${status}`);
          try {
            resolve({ kind: 'json', status, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown });
          } catch {
            fail('malformed', `status ${status} with a body that is not JSON`);
          }
        });
      });
      req.on('error', transportFailure);
    });
  }

  /**
   * Asks `url` once (`method` GET, or POST with a JSON body) and reports its status, redirects not
   * followed, with the body read only up to the size limit: for the settings page's test of a
   * source and its profile look-ups, where the answer's status matters more than a judged profile.
   */
  request(url: URL, init: { method?: 'GET' | 'POST'; json?: unknown } = {}): Promise<{ kind: 'answered'; status: number; body: Buffer } | { kind: 'failed'; reason: FailureReason; detail: string }> {
    const client = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? this.#https : this.#http;
    const payload = init.json === undefined ? undefined : Buffer.from(JSON.stringify(init.json));
    return new Promise((settle) => {
      let timedOut = false;
      let done = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const finish = (answer: { kind: 'answered'; status: number; body: Buffer } | { kind: 'failed'; reason: FailureReason; detail: string }) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        settle(answer);
      };
      const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': USER_AGENT };
      if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      const req = client.request(url, { method: init.method ?? 'GET', agent, headers }, (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            finish({ kind: 'failed', reason: 'malformed', detail: `response over ${MAX_RESPONSE_BYTES} bytes` });
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (err) => finish({ kind: 'failed', reason: timedOut ? 'timeout' : 'transport', detail: err.message }));
        res.on('end', () => finish({ kind: 'answered', status, body: Buffer.concat(chunks) }));
      });
      req.on('error', (err) => finish({ kind: 'failed', reason: timedOut ? 'timeout' : 'transport', detail: err.message }));
      req.end(payload);
    });
  }

  /** Drops the kept-alive connections (on shutdown). */
  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}
