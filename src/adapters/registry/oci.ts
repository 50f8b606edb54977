import { createHash } from 'node:crypto';
import { ImageNotInRegistryError, RegistryUnavailableError, type ImageRef, type RegistryAdapter } from './types.js';

/** Manifest kinds we accept, so the registry answers with the digest of the index when there is one. */
export const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

const DIGEST = /^sha256:[a-f0-9]{64}$/;

export interface OciRegistryOptions {
  /** `https://registry.example` or `http://127.0.0.1:5000`. */
  url: string;
  username?: string;
  password?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * The platform registry over the OCI distribution API: a tag is resolved to the digest the registry
 * names in `Docker-Content-Digest`. Token auth (a `Bearer` challenge) is followed once per request,
 * anonymously or with the configured credentials.
 */
export class OciRegistry implements RegistryAdapter {
  readonly kind = 'oci' as const;
  readonly host: string;
  readonly #base: string;
  readonly #basic: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: OciRegistryOptions) {
    const url = new URL(options.url);
    this.host = url.host.toLowerCase();
    this.#base = `${url.protocol}//${url.host}`;
    this.#basic =
      options.username !== undefined
        ? `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`
        : undefined;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#fetch = options.fetch ?? fetch;
  }

  async resolve(ref: ImageRef): Promise<string> {
    const reference = ref.digest ?? ref.tag ?? 'latest';
    const path = `/v2/${ref.repository}/manifests/${reference}`;
    let res = await this.#manifest('HEAD', path);
    // Some registries do not answer HEAD for manifests (or omit the digest header on it).
    if (res.status === 405 || (res.ok && !res.headers.get('docker-content-digest'))) {
      res = await this.#manifest('GET', path);
    }
    if (res.status === 404) {
      await res.body?.cancel();
      throw new ImageNotInRegistryError(`${ref.repository}:${reference} is not in the registry`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new RegistryUnavailableError(`the registry answered ${res.status}`);
    }
    let digest = res.headers.get('docker-content-digest')?.trim().toLowerCase();
    if (!digest && res.body) {
      digest = `sha256:${createHash('sha256').update(Buffer.from(await res.arrayBuffer())).digest('hex')}`;
    } else {
      await res.body?.cancel();
    }
    if (!digest || !DIGEST.test(digest)) throw new RegistryUnavailableError('the registry named no usable digest');
    if (ref.digest && digest !== ref.digest) throw new RegistryUnavailableError('the registry named another digest');
    return digest;
  }

  async #manifest(method: 'HEAD' | 'GET', path: string): Promise<Response> {
    const headers: Record<string, string> = { Accept: MANIFEST_ACCEPT };
    if (this.#basic) headers.Authorization = this.#basic;
    let res = await this.#send(`${this.#base}${path}`, { method, headers });
    const challenge = res.status === 401 ? res.headers.get('www-authenticate') : null;
    if (challenge && /^bearer\s/i.test(challenge)) {
      await res.body?.cancel();
      const token = await this.#token(challenge);
      res = await this.#send(`${this.#base}${path}`, { method, headers: { ...headers, Authorization: `Bearer ${token}` } });
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new RegistryUnavailableError(`the registry refused our credentials (${res.status})`);
    }
    return res;
  }

  async #token(challenge: string): Promise<string> {
    const params = parseChallenge(challenge);
    if (!params.realm) throw new RegistryUnavailableError('the registry sent a token challenge without a realm');
    let realm: URL;
    try {
      realm = new URL(params.realm);
    } catch {
      throw new RegistryUnavailableError('the registry sent an unusable token realm');
    }
    if (params.service) realm.searchParams.set('service', params.service);
    if (params.scope) realm.searchParams.set('scope', params.scope);
    const res = await this.#send(realm.toString(), {
      method: 'GET',
      headers: this.#basic ? { Authorization: this.#basic } : {},
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new RegistryUnavailableError(`the token service answered ${res.status}`);
    }
    const body = (await res.json().catch(() => ({}))) as { token?: unknown; access_token?: unknown };
    const token = body.token ?? body.access_token;
    if (typeof token !== 'string' || token === '') throw new RegistryUnavailableError('the token service sent no token');
    return token;
  }

  async #send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.#fetch(url, { ...init, redirect: 'follow', signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      throw new RegistryUnavailableError(`the registry cannot be reached: ${(err as Error).message}`);
    }
  }
}

/** `Bearer realm="…",service="…",scope="…"` → its parameters. */
export function parseChallenge(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of header.replace(/^bearer\s+/i, '').matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) out[m[1]!.toLowerCase()] = m[2]!;
  return out;
}
