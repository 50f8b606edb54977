import type { FeatureModule } from '../deps.js';
import { createAccounts } from '../features/accounts/index.js';
import { createActivity } from '../features/activity/index.js';
import { createAuth } from '../features/auth/index.js';
import { createBuilds } from '../features/builds/index.js';
import { createConsole } from '../features/console/index.js';
import { createFleet } from '../features/fleet/index.js';
import { createImages } from '../features/images/index.js';
import { createLinking } from '../features/linking/index.js';
import { createMigration } from '../features/migration/index.js';
import { createNotifications } from '../features/notifications/index.js';
import { createNodes } from '../features/nodes/index.js';
import { createOpLogin } from '../features/op-login/index.js';
import { createOperations } from '../features/operations/index.js';
import { createPasskeys } from '../features/passkeys/index.js';
import { createProbes } from '../features/probes/index.js';
import { createReauth } from '../features/reauth/index.js';
import { createReclaim } from '../features/reclaim/index.js';
import { createSchedules, forgetServerSchedules } from '../features/schedules/index.js';
import { createServers } from '../features/servers/index.js';
import { createSettings } from '../features/settings/index.js';
import { createVerifier } from '../features/verifier/index.js';
import { createWorlds } from '../features/worlds/index.js';
import type { ServiceParts } from './parts.js';

/**
 * Every feature's module, made once per service from its parts. The order is the order of each
 * face's routes (so each face's OpenAPI document and route matching keep theirs) and the order the
 * tasks start in (they stop in reverse: a feature's rounds stop before those of the features it
 * uses, so the world jobs a schedule or a node move started are waited for after those stopped).
 *
 * Each is made by its feature's `createX(infrastructure, { what it is handed })`, handed its own
 * part: the objects (caches, runtimes, collectors) that the feature made with its own
 * `createXParts`, called in order by `assembleDeps` (src/service.ts), where a test or a bench hands
 * its own instead. What runs in them is closed by the module's tasks (a closing task).
 */
export function createModules(parts: ServiceParts): FeatureModule[] {
  const opLogin = createOpLogin();
  return [
    createProbes(),
    createAuth(parts, parts, parts),
    createAccounts(parts, parts),
    createServers(parts, parts, { alsoForget: [forgetServerSchedules] }),
    createVerifier(parts, parts),
    createImages(),
    createOperations(),
    createBuilds(parts, parts),
    createConsole(parts, parts, parts),
    createLinking(parts, { alsoPurge: [opLogin.api.purgeExpired] }),
    opLogin,
    createMigration(),
    createReclaim(parts, parts),
    createPasskeys(parts),
    createReauth(),
    createWorlds(parts, parts, parts),
    createSchedules(parts, parts),
    createSettings(parts, parts),
    createActivity(parts, parts),
    createNotifications(parts),
    createFleet(parts, parts, parts),
    createNodes(parts, parts, parts),
  ];
}
