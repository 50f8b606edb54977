/**
 * The `felis` verbs that talk to a running service: its public HTTP API on the panel host, with an
 * API key (`Authorization: Bearer felis_…`, made on the panel's account page or with
 * `POST /api/v1/account/api-keys`). The key acts as its user: what the user may do in the panel,
 * the key may do here (a `read` key: only the reading verbs).
 *
 *   FELIS_URL      the panel's address (default http://panel.localhost:8080, `npm start`'s)
 *   FELIS_API_KEY  the key (or --key; the environment keeps it out of the shell's history)
 *
 * A `*.localhost` name is this machine (RFC 6761), as browsers take it, whatever the resolver says.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { SERVICE_VERSION } from '../version.js';
import { UsageError } from './command.js';

export const DEFAULT_URL = 'http://panel.localhost:8080';
/** One request's whole deadline: a hung service is an error, never a hang. */
const REQUEST_TIMEOUT_MS = 30_000;
/** The largest answer read (a list of servers or backups is far smaller). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export interface ApiTarget {
  url: URL;
  /** Sent as `Authorization: Bearer …`: an API key (panel host) or the ops token (internal face). */
  token: string;
}

function parseUrl(address: string, setting: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new UsageError(`${setting} is not an address: ${address}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${setting} must be http:// or https://, not ${url.protocol}`);
  return url;
}

/** The internal face's default address: this machine's INTERNAL_PORT (the service never exposes it). */
export const DEFAULT_INTERNAL_URL = 'http://127.0.0.1:8081';

/**
 * The operator's own door (the internal face, the ops token) for what an API key may not do:
 * FELIS_INTERNAL_URL (or --internal-url; default this machine's port 8081, where `kubectl exec`
 * into the service's pod lands too) and SERVICE_TOKEN_OPS, the setting the service itself reads.
 */
export function opsTarget(flags: { url?: string }, env: NodeJS.ProcessEnv = process.env): ApiTarget {
  const url = parseUrl(flags.url ?? env.FELIS_INTERNAL_URL ?? (env.INTERNAL_PORT ? `http://127.0.0.1:${env.INTERNAL_PORT}` : DEFAULT_INTERNAL_URL), 'FELIS_INTERNAL_URL (or --internal-url)');
  const token = (env.SERVICE_TOKEN_OPS ?? '').trim();
  if (!token) throw new UsageError('set SERVICE_TOKEN_OPS to the service\'s ops token (the same setting the service reads)');
  return { url, token };
}

/** Where and as whom: `--url`/`--key` over FELIS_URL/FELIS_API_KEY. */
export function apiTarget(flags: { url?: string; key?: string }, env: NodeJS.ProcessEnv = process.env): ApiTarget {
  const url = parseUrl(flags.url ?? env.FELIS_URL ?? DEFAULT_URL, 'FELIS_URL (or --url)');
  const key = (flags.key ?? env.FELIS_API_KEY ?? '').trim();
  if (!key) {
    throw new UsageError('set FELIS_API_KEY to an API key (the panel\'s account page makes one: "API keys"), or pass --key');
  }
  if (!/^felis_[A-Za-z0-9_-]{20,200}$/.test(key)) throw new UsageError('FELIS_API_KEY does not look like an API key (felis_…)');
  return { url, token: key };
}

/** An error answer of the API: its status, code and message, and the request id to quote. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
  ) {
    super(message);
  }

  /** One line for the terminal: what went wrong and what the service's log calls it. */
  describe(): string {
    return `felis: ${this.status} ${this.code}: ${this.message}${this.requestId ? ` (request ${this.requestId})` : ''}`;
  }
}

/** A `*.localhost` host name resolves to loopback without asking the resolver (RFC 6761 §6.3). */
function lookup(hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
    return;
  }
  dnsLookup(hostname, options, callback as never);
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** One API call; an error answer throws ApiError, a service that cannot be reached throws Error. */
export async function callApi(target: ApiTarget, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const url = new URL(path, target.url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const options: RequestOptions = {
    method,
    lookup,
    headers: {
      authorization: `Bearer ${target.token}`,
      accept: 'application/json',
      'user-agent': `felis-cli/${SERVICE_VERSION}`,
      ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
    },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, options, resolve);
    req.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.name === 'AbortError' || err.name === 'TimeoutError' ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : err.code ?? err.message;
      reject(new Error(`felis: cannot reach the service at ${target.url.origin} (${why}); is it running, and is FELIS_URL right?`));
    });
    req.end(payload);
  });
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        response.destroy();
        throw new Error(`felis: the answer to ${method} ${url.pathname} is larger than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('felis:')) throw err;
    throw new Error(`felis: the answer to ${method} ${url.pathname} broke off (${err instanceof Error ? err.message : String(err)})`);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const status = response.statusCode ?? 0;
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (status >= 400) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown; request_id?: unknown } } | undefined)?.error;
    const requestId = typeof error?.request_id === 'string' ? error.request_id : (response.headers['x-request-id'] as string | undefined);
    throw new ApiError(
      status,
      typeof error?.code === 'string' ? error.code : 'http_error',
      typeof error?.message === 'string' ? error.message : `${method} ${url.pathname} answered ${status}`,
      requestId,
    );
  }
  if (text && parsed === undefined) throw new Error(`felis: ${method} ${url.pathname} answered ${status} with a body that is not JSON; is FELIS_URL the panel's address?`);
  return { status, body: parsed };
}
