import type { Context } from 'hono';
import { DomainError } from '../../../lib/errors.js';
import type { SessionAuthenticator, SessionContext } from '../../../http/session.js';

/**
 * What a session that must change its password may still do: change it, read who it is (the panel
 * learns from `/me` that a change is due). Signing out is public and needs no session.
 */
const ALLOWED = new Set(['POST /api/v1/auth/change-password', 'GET /api/v1/me']);

function gate(c: Context, session: SessionContext): SessionContext {
  if (session.mustChangePassword && !ALLOWED.has(`${c.req.method} ${c.req.path}`)) {
    throw new DomainError('password_change_required', 'Change your password first.');
  }
  return session;
}

/**
 * Wraps the session check: an account whose password must change (set by staff, or a reset) is
 * refused everything else with 403 `password_change_required` until it changes it. Synchronous
 * when the check it wraps is.
 */
export function withPasswordChangeGate(inner: SessionAuthenticator): SessionAuthenticator {
  return {
    forgetCached: () => inner.forgetCached?.(),
    close: () => inner.close?.(),
    authenticate(c: Context, requirement) {
      const session = inner.authenticate(c, requirement);
      return session instanceof Promise ? session.then((read) => gate(c, read)) : gate(c, session);
    },
  };
}
