import type { FeatureModule } from '../../deps.js';
import type { CodePurge } from '../linking/index.js';
import { externalOpLoginRoutes } from './external-routes.js';
import { internalOpLoginRoutes } from './internal-routes.js';
import { purgeOpLoginRequests } from './service.js';

export interface OpLoginApi {
  /** Deletes its expired requests: handed to linking's housekeeping round, which runs it. */
  purgeExpired: CodePurge;
}

/** The op-login module: its routes on both faces, and the purge of its own rows it hands to linking. */
export function createOpLogin(): FeatureModule<OpLoginApi> {
  return {
    name: 'op-login',
    api: { purgeExpired: purgeOpLoginRequests },
    routes: { external: [externalOpLoginRoutes()], internal: [internalOpLoginRoutes()] },
    tasks: [],
  };
}
