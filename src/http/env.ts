import type { RequestIdVariables } from 'hono/request-id';
import type { Caller, Config } from '../config.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from './metrics.js';
import type { RawBody } from './raw-body.js';
import type { SessionAuthenticator, SessionContext } from './session.js';

export type Face = 'internal' | 'external';

/**
 * The dependencies a handler reaches as `c.var.deps`. Here, only what the cross-cutting steps of
 * src/http/ read; src/deps.ts widens it to every dependency by declaration merging, so handlers
 * see all of them while src/http/ names no feature (DESIGN.md: dependencies flow one way).
 */
export interface AppDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** Provided by the accounts feature; without it the app and admin tiers refuse everyone. */
  sessions?: SessionAuthenticator;
}

export interface AppEnv {
  Variables: RequestIdVariables & {
    deps: AppDeps;
    /** The service caller, set by service-token auth on the internal face. */
    caller?: Caller;
    /** The session, set by tier auth on the external face. */
    session?: SessionContext;
    /** The request body of a raw-body route (route.ts `rawBody`), read as it arrives. */
    rawBody?: RawBody;
  };
}

/** A handler's context on an app- or admin-tier route: the tier check has set the session. */
export interface SignedInEnv extends AppEnv {
  Variables: AppEnv['Variables'] & { session: SessionContext };
}

/** A handler's context on a service-tier route: token auth has set the caller. */
export interface ServiceEnv extends AppEnv {
  Variables: AppEnv['Variables'] & { caller: Caller };
}
