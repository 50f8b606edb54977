import type { Context } from 'hono';
import type { Caller } from '../config.js';
import type { AppEnv } from './env.js';
import { DomainError } from '../lib/errors.js';
import { checkCaller } from './service-auth.js';

/** Who may call a route: declared once, next to the route's definition. */
export type Access =
  | { tier: 'public' }
  | { tier: 'service'; callers: readonly Caller[] }
  | { tier: 'app'; setupAllowed?: boolean }
  | { tier: 'admin' };

/** The access check of a route: synchronous for tokens, a promise only where a session is read. */
export type AccessCheck = (c: Context<AppEnv>) => void | Promise<void>;

function requireSession(tier: 'app' | 'admin', setupAllowed: boolean): AccessCheck {
  return (c) => {
    const sessions = c.get('deps').sessions;
    // Fail closed: without an authenticator no session is ever accepted.
    if (!sessions) throw new DomainError('unauthorized', 'A signed-in session is required.');
    // A cached session check answers synchronously: no promise for the request then.
    const session = sessions.authenticate(c, { tier, setupAllowed });
    if (session instanceof Promise) return session.then((read) => void c.set('session', read));
    c.set('session', session);
  };
}

export function accessCheck(access: Access): AccessCheck {
  switch (access.tier) {
    case 'public':
      return () => undefined;
    case 'service': {
      const allowed = new Set(access.callers);
      return (c) => checkCaller(c, allowed);
    }
    case 'app':
      return requireSession('app', access.setupAllowed ?? false);
    case 'admin':
      return requireSession('admin', false);
  }
}
