import type { Context } from 'hono';

export type Role = 'owner' | 'admin' | 'user';

/** The signed-in caller of an app- or admin-tier route. */
export interface SessionContext {
  userId: string;
  role: Role;
  /** sha-256 of the cookie; the session's id. */
  tokenHash: string;
  /** The account is still in first-run setup lockdown. */
  inSetup: boolean;
  /** The account must change its password before anything else (accounts/sessions/password-change-gate.ts). */
  mustChangePassword?: boolean;
  /** The request came with an API key (`Authorization: Bearer felis_…`) rather than a session cookie. */
  apiKey?: { id: string; scopes: readonly ('read' | 'write')[] };
}

export interface TierRequirement {
  tier: 'app' | 'admin';
  /** The route is one of the setup-allowed operations. */
  setupAllowed: boolean;
}

/**
 * Resolves the session of a request for a tier, or throws an DomainError (401, 403 forbidden,
 * 403 setup_required). Implemented by the accounts feature. Synchronous where it can be (a
 * cached session check): a promise, or a rejected one, only where it must wait.
 */
export interface SessionAuthenticator {
  authenticate(c: Context, requirement: TierRequirement): SessionContext | Promise<SessionContext>;
  /**
   * A write request has been answered on this replica (it may have signed out, revoked, disabled,
   * changed a role): forget every cached session check, so that it takes effect at once here. Told
   * through the front door's `AnsweredWrites` (src/http/answered-writes.ts), which its maker subscribes.
   */
  forgetCached?(): void;
  /** Stops what the check listens to (the change feed) and caches nothing more: the service is stopping. */
  close?(): void;
}
