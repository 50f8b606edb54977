import { createMiddleware } from 'hono/factory';
import type { Caller } from '../config.js';
import type { AppEnv } from './env.js';
import { ApiError } from './errors.js';
import { requireCaller } from './service-auth.js';

/** Who may call a route: declared once, next to the route's definition. */
export type Access =
  | { tier: 'public' }
  | { tier: 'service'; callers: readonly Caller[] }
  | { tier: 'app'; setupAllowed?: boolean }
  | { tier: 'admin' };

export function requireSession(tier: 'app' | 'admin', setupAllowed: boolean) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const sessions = c.var.deps.sessions;
    // Fail closed: without an authenticator no session is ever accepted.
    if (!sessions) throw new ApiError('unauthorized', 'A signed-in session is required.');
    c.set('session', await sessions.authenticate(c, { tier, setupAllowed }));
    await next();
  });
}

export function accessMiddleware(access: Access) {
  switch (access.tier) {
    case 'public':
      return [];
    case 'service':
      return [requireCaller(access.callers)];
    case 'app':
      return [requireSession('app', access.setupAllowed ?? false)];
    case 'admin':
      return [requireSession('admin', false)];
  }
}
