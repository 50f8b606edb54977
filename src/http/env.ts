import type { RequestIdVariables } from 'hono/request-id';
import type { Caller } from '../config.js';
import type { Deps } from '../deps.js';
import type { RawBody } from './raw-body.js';
import type { SessionContext } from './session.js';

export type Face = 'internal' | 'external';

export interface AppEnv {
  Variables: RequestIdVariables & {
    deps: Deps;
    /** The service caller, set by service-token auth on the internal face. */
    caller?: Caller;
    /** The session, set by tier auth on the external face. */
    session?: SessionContext;
    /** The request body of a raw-body route (route.ts `rawBody`), read as it arrives. */
    rawBody?: RawBody;
  };
}
