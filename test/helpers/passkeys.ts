import { createTestApps, createTestDeps, jsonRequest, type TestDeps } from './app.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import type { SignedIn } from './sessions.js';
import { SoftAuthenticator } from './soft-authenticator.js';

export const PANEL = 'panel.felis.test';
export const PANEL_ORIGIN = `https://${PANEL}`;

let address = 0;
/** Headers of an anonymous browser on the panel, each from its own address (door limits stay out of the way). */
export function visitor(ip = `203.0.113.${(address++ % 250) + 1}`): Record<string, string> {
  return { Host: PANEL, 'x-test-ip': ip };
}

export interface PasskeyFixture {
  deps: TestDeps;
  request(path: string, init?: RequestInit): Promise<Response>;
  post(path: string, body: unknown, headers: Record<string, string>): Promise<Response>;
  /** Adds a passkey to the signed-in account with the authenticator; the finish answer. */
  register(s: SignedIn, authenticator: SoftAuthenticator, name?: string): Promise<Response>;
  /** Request options of an email-first sign-in. */
  loginBegin(email: string): Promise<{ challenge: string; allowCredentials: Array<{ id: string }> }>;
}

/** The external face on a test database, with the visitor header trusted and the panel's relying party. */
export function passkeyFixture(database: DatabaseHandle, env: Record<string, string> = {}): PasskeyFixture {
  const deps = createTestDeps(database, { env: { CLIENT_IP_HEADER: 'x-test-ip', ...env } });
  const app = createTestApps(deps).external;
  const request = async (path: string, init?: RequestInit) => app.request(path, init);
  const post = (path: string, body: unknown, headers: Record<string, string>) => request(path, jsonRequest('POST', body, headers));
  return {
    deps,
    request,
    post,
    async register(s, authenticator, name) {
      const begin = await request('/api/v1/account/passkey/register/begin', { method: 'POST', headers: s.headers });
      if (begin.status !== 200) return begin;
      const attestation = authenticator.register((await begin.json()) as { challenge: string; user: { id: string } });
      return post('/api/v1/account/passkey/register/finish', name === undefined ? { attestation } : { name, attestation }, s.headers);
    },
    async loginBegin(email) {
      const res = await post('/api/v1/auth/passkey/login/begin', { email }, visitor());
      if (res.status !== 200) throw new Error(`login begin answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { challenge: string; allowCredentials: Array<{ id: string }> };
    },
  };
}

export const panelAuthenticator = () => new SoftAuthenticator('felis.test', PANEL_ORIGIN);
