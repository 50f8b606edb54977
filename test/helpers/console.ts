import { serverClaims } from '../../src/db/schema/servers.js';
import type { TestDeps } from './app.js';
import { addServer } from './servers.js';
import { createUser, signIn } from './sessions.js';

/** A server of the test's simulated cluster that has started and runs (its pod writes logs, answers RCON). */
export async function runningServer(deps: TestDeps): Promise<string> {
  const { name } = addServer(deps).spec;
  await deps.cluster.setDesiredState(name, 'Running');
  deps.clock.advance(deps.cluster.options.startDelayMs);
  deps.cluster.tick();
  return name;
}

export async function claimFor(deps: TestDeps, name: string, userId: string): Promise<void> {
  await deps.database.db.insert(serverClaims).values({ serverName: name, subdomain: name, userId, claimedAt: deps.clock.now() });
}

/** The owner, a staff member and a stranger of a server, each signed in on the panel. */
export async function consoleCast(deps: TestDeps, name: string) {
  const owner = await createUser(deps);
  const admin = await createUser(deps, { role: 'admin' });
  const stranger = await createUser(deps);
  await claimFor(deps, name, owner.id);
  const panel = deps.config.panelHost!;
  return {
    owner: { ...owner, ...(await signIn(deps, { userId: owner.id, host: panel })) },
    admin: { ...admin, ...(await signIn(deps, { userId: admin.id, host: panel })) },
    stranger: { ...stranger, ...(await signIn(deps, { userId: stranger.id, host: panel })) },
  };
}
