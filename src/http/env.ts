import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestIdVariables } from 'hono/request-id';
import type { Caller, Config } from '../config.js';
import type { Logger } from '../lib/logger.js';
import type { AnsweredWrites } from './answered-writes.js';
import type { Metrics } from './metrics.js';
import type { RawBody } from './raw-body.js';
import type { AnswerHeaderWriter } from './security-headers.js';
import type { SessionAuthenticator, SessionContext } from './session.js';

export type Face = 'internal' | 'external';

/**
 * The dependencies a handler reaches as `c.var.deps`. Here, only what the cross-cutting steps of
 * src/http/ read; src/deps.ts widens it to the infrastructure by declaration merging (never to a
 * feature's part: a route gets those from its route factory), so src/http/ names neither the
 * infrastructure's adapters nor any feature (docs/architecture.md: dependencies flow one way).
 */
export interface AppDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** Provided by the accounts feature; without it the app and admin tiers refuse everyone. */
  sessions?: SessionAuthenticator;
  /**
   * Records a signed-in request that changed something (an unsafe method answered below 400):
   * provided by the audit feature, so every state-changing route leaves a row with its actor,
   * request id and target. Absent: not recorded.
   */
  recordChange?: (change: RequestChange) => void;
  /** Told of every write request answered on this replica, for the read caches to forget (absent: none is told). */
  answeredWrites?: AnsweredWrites;
}

/** A state-changing request as the front door saw it. */
export interface RequestChange {
  /** Who made it: the request's session (its user, and the API key it came with, if any). */
  actor: { userId: string; apiKey?: { id: string } };
  method: string;
  /** The route's pattern as Hono writes it (`/api/v1/servers/:name/wake`). */
  route: string;
  params: Record<string, string>;
  status: number;
  requestId: string;
}

/**
 * What the runtime hands the app with each request (`c.env`): on Node, @hono/node-server's
 * `incoming` and `outgoing` (its HttpBindings); on Bun, the server's per-request functions
 * (src/runtime/serve.ts). An in-process request (`app.request()` in a test) has none of them.
 */
export interface RuntimeBindings {
  /** Node: the request as node:http parsed it. */
  incoming?: IncomingMessage;
  /** Node: the response; the service's own writes the answer headers itself (runtime/node-response.ts). */
  outgoing?: ServerResponse & Partial<AnswerHeaderWriter>;
  /** Bun: the peer of this request. */
  requestIP?(request: Request): { address: string } | null;
  /** Bun: the idle time-out of this request's connection, in seconds (0: none). */
  timeout?(request: Request, seconds: number): void;
}

export interface AppEnv {
  Bindings: RuntimeBindings;
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
