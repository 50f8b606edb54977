/**
 * The listener's calls to the service's internal face, the ones the game proxy makes (the original
 * proxy's FelisApiClient): by-host, status, wake. Over HTTP with the proxy's service token, so the
 * listener depends on the contract and on nothing inside the service: it runs in-process today and
 * could run beside it unchanged.
 */

/** The fields of ServerInfo the listener reads. */
export interface ServerView {
  name: string;
  phase: string;
  ready: boolean;
  playersOnline: number;
  playersMax: number;
  autostartPolicy?: string;
  desiredState?: string;
  endpointAddress?: string;
  displayName?: string;
  startGaveUp?: boolean;
}

/** A non-success answer: the status and the envelope's code. */
export class InternalApiError extends Error {
  override name = 'InternalApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface InternalApiOptions {
  /** The internal face, e.g. `http://127.0.0.1:8081`. */
  baseUrl: string;
  token: string;
  timeoutMs?: number;
}

export class InternalApi {
  readonly #o: Required<InternalApiOptions>;

  constructor(options: InternalApiOptions) {
    this.#o = { timeoutMs: 3_000, ...options };
  }

  byHost(host: string): Promise<ServerView> {
    return this.#call('GET', `/api/v1/servers/by-host/${encodeURIComponent(host)}`, 200);
  }

  status(name: string): Promise<ServerView> {
    return this.#call('GET', `/api/v1/internal/servers/${encodeURIComponent(name)}/status`, 200);
  }

  wake(name: string, mcUuid: string): Promise<{ name: string; phase: string; ready: boolean }> {
    return this.#call('POST', `/api/v1/internal/servers/${encodeURIComponent(name)}/wake`, 202, { mc_uuid: mcUuid });
  }

  async #call<T>(method: string, path: string, expect: number, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.#o.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#o.token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.#o.timeoutMs),
      });
    } catch (err) {
      throw new InternalApiError(0, 'unreachable', `the control plane did not answer: ${(err as Error).message}`);
    }
    const text = await response.text().catch(() => '');
    if (response.status !== expect) {
      let code = 'error';
      let message = `the control plane answered ${response.status}`;
      try {
        const envelope = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
        if (typeof envelope.error?.code === 'string') code = envelope.error.code;
        if (typeof envelope.error?.message === 'string') message = envelope.error.message;
      } catch {
        // Not the envelope: the status says enough.
      }
      const retry = Number(response.headers.get('retry-after'));
      throw new InternalApiError(response.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
    }
    return JSON.parse(text) as T;
  }
}
