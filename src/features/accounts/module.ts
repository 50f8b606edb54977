import { closingTask } from '../../coordination/index.js';
import type { ChangeFeed } from '../../db/change-feed.js';
import type { Deps, FeatureModule } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { AnsweredWrites } from '../../http/answered-writes.js';
import type { SessionAuthenticator } from '../../http/session.js';
import { adminAccountRoutes } from './admin-routes.js';
import { createSessionAuthenticator, SignedInAccounts } from './authenticator.js';
import { accountHousekeepingTask } from './housekeeping.js';
import type { AccountsParts } from './parts.js';
import { accountRoutes } from './routes.js';
import { withPasswordChangeGate } from './sessions/index.js';

/**
 * How the session and account changes committed on another replica reach this one: the database's
 * change feed, listened to only while checked rows are cached (`SESSION_CACHE_MS` > 0; without a
 * cache every check reads the database). Servers' access changes follow the same feed.
 */
export function sessionChangeFeed(infrastructure: Pick<Deps, 'config' | 'database'>): ChangeFeed | undefined {
  return infrastructure.config.sessionCacheMs > 0 ? infrastructure.database.changeFeed?.() : undefined;
}

/** What the accounts feature makes: the session check of the front door and the rows it fills. */
export interface AccountsMade {
  /** The session and API key check of the app and admin tiers, behind the password-change gate. */
  sessions: SessionAuthenticator | undefined;
  signedInAccounts: SignedInAccounts | undefined;
}

/**
 * Makes the accounts feature's objects, once per service. `given` replaces any of them (tests and
 * benches hand their own; a key given as undefined leaves it out).
 */
export function createAccountsParts(infrastructure: Pick<Deps, 'config' | 'database'>, given: Partial<AccountsMade> = {}, answeredWrites?: AnsweredWrites): AccountsMade {
  const signedInAccounts = 'signedInAccounts' in given ? given.signedInAccounts : new SignedInAccounts();
  const sessions = 'sessions' in given ? given.sessions : withPasswordChangeGate(createSessionAuthenticator(sessionChangeFeed(infrastructure), signedInAccounts));
  // A write answered here (a sign-out, a revoke, a disable, a role change) counts from the next
  // request on: the session check forgets what it kept.
  answeredWrites?.subscribe(() => sessions?.forgetCached?.());
  return { sessions, signedInAccounts };
}

/**
 * The accounts module: the signed-in account's routes and the staff's account routes, the
 * housekeeping round, and the closing of its session check (`infrastructure.sessions`, the front
 * door's part it made: its caches' subscription to the change feed). `apis` are what the features
 * above hand it (their server counts and passkeys) and the signed-in rows its session check fills.
 */
export function createAccounts(infrastructure: AppDeps, apis: AccountsParts): FeatureModule {
  const deps = { ...infrastructure, ...apis };
  return {
    name: 'accounts',
    api: {},
    routes: { external: [accountRoutes(deps), adminAccountRoutes(deps)] },
    tasks: [closingTask('session check', () => infrastructure.sessions?.close?.()), accountHousekeepingTask(deps, deps.replica)],
  };
}
