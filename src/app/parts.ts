import type { AccountsParts } from '../features/accounts/index.js';
import type { AuthParts } from '../features/auth/index.js';
import type { BuildsParts } from '../features/builds/index.js';
import type { ConsoleParts } from '../features/console/index.js';
import type { FleetParts } from '../features/fleet/index.js';
import type { NodesParts } from '../features/nodes/index.js';
import type { VerifierParts } from '../features/verifier/index.js';
import type { WorldsParts } from '../features/worlds/index.js';
import type { AppDeps } from '../http/env.js';
import type { ServersParts } from '../features/servers/index.js';

/**
 * Everything the composition root (src/service.ts `assembleDeps`) puts together: the
 * infrastructure (src/deps.ts), the front door's parts (src/http/env.ts) and what each feature
 * makes (each with its own `createXParts`). Only the composition root and the apps it builds name the whole; a feature names the
 * infrastructure and the parts it is handed, by their own types, and its routes are given them.
 */
export type ServiceParts = AppDeps & AccountsParts & AuthParts & ServersParts & NodesParts & FleetParts & WorldsParts & BuildsParts & ConsoleParts & VerifierParts;
