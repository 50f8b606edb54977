import type { FeatureModule } from '../deps.js';
import { accountHousekeepingTask, accountRoutes, adminAccountRoutes } from '../features/accounts/index.js';
import { createActivity } from '../features/activity/index.js';
import { authRoutes } from '../features/auth/index.js';
import { createBuilds } from '../features/builds/index.js';
import { createConsole } from '../features/console/index.js';
import { createFleet } from '../features/fleet/index.js';
import { createImages } from '../features/images/index.js';
import { createLinking } from '../features/linking/index.js';
import { externalMigrationRoutes, internalMigrationRoutes } from '../features/migration/index.js';
import { createNotifications } from '../features/notifications/index.js';
import { nodeRoutes, nodeTasksRecovery } from '../features/nodes/index.js';
import { createOpLogin } from '../features/op-login/index.js';
import { createOperations } from '../features/operations/index.js';
import { passkeyHousekeepingTask, passkeyRoutes } from '../features/passkeys/index.js';
import { createProbes } from '../features/probes/index.js';
import { reauthRoutes } from '../features/reauth/index.js';
import { createReclaim } from '../features/reclaim/index.js';
import { createSchedules } from '../features/schedules/index.js';
import { externalServerRoutes, internalServerRoutes, opsServerRoutes, restartsTask, retirementSweepTask } from '../features/servers/index.js';
import { internalSettingsRoutes, settingsRoutes } from '../features/settings/index.js';
import { createVerifier } from '../features/verifier/index.js';
import { externalWorldRoutes, internalWorldRoutes, worldsTasks } from '../features/worlds/index.js';
import type { ServiceParts } from './parts.js';

/**
 * Every feature's module, made once per service from its parts. The order is the order of each
 * face's routes (so each face's OpenAPI document and route matching keep theirs) and the order the
 * tasks start in (they stop in reverse: a feature's rounds stop before those of the features it
 * uses, so the world jobs a schedule or a node move started are waited for after those stopped).
 *
 * Features made with `createX(infrastructure, { APIs below })`: activity, builds, console, fleet,
 * images, linking, notifications, op-login, operations, probes, reclaim, schedules, verifier. The
 * others (accounts, auth, passkeys, reauth, servers, nodes, worlds, migration, settings) are still
 * written here from their loose route and task makers (docs/notes/issue-39-modules.md).
 */
export function createModules(parts: ServiceParts): FeatureModule[] {
  const { replica } = parts;
  const opLogin = createOpLogin();
  return [
    createProbes(),
    { name: 'auth', api: {}, routes: { external: [authRoutes(parts)] }, tasks: [] },
    { name: 'accounts', api: {}, routes: { external: [accountRoutes(parts), adminAccountRoutes(parts)] }, tasks: [accountHousekeepingTask(parts, replica)] },
    {
      name: 'servers',
      api: {},
      routes: { external: [externalServerRoutes(parts)], internal: [internalServerRoutes(parts), opsServerRoutes(parts)] },
      tasks: [retirementSweepTask(parts, replica), restartsTask(parts, replica)],
    },
    createVerifier(parts, parts),
    createImages(),
    createOperations(),
    createBuilds(parts, parts),
    createConsole(parts, parts, parts),
    createLinking(parts, { alsoPurge: [opLogin.api.purgeExpired] }),
    opLogin,
    { name: 'migration', api: {}, routes: { external: [externalMigrationRoutes()], internal: [internalMigrationRoutes()] }, tasks: [] },
    createReclaim(parts, parts),
    { name: 'passkeys', api: {}, routes: { external: [passkeyRoutes()] }, tasks: [passkeyHousekeepingTask(parts, replica)] },
    { name: 'reauth', api: {}, routes: { external: [reauthRoutes()] }, tasks: [] },
    {
      name: 'worlds',
      api: {},
      routes: { external: [externalWorldRoutes(parts)], internal: [internalWorldRoutes(parts)] },
      tasks: worldsTasks(parts, replica),
    },
    createSchedules(parts, parts),
    { name: 'settings', api: {}, routes: { external: [settingsRoutes(parts)], internal: [internalSettingsRoutes(parts)] }, tasks: [] },
    createActivity(parts, parts),
    createNotifications(parts),
    createFleet(parts, parts, parts),
    { name: 'nodes', api: {}, routes: { external: [nodeRoutes(parts)] }, tasks: [nodeTasksRecovery(parts)] },
  ];
}
