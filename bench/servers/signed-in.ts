/**
 * The service's two faces over assembled deps, with one signed-in panel user: what the benches of
 * signed-in reads (`bench:table`, `bench:db-burst`) load.
 */
import { createApps } from '../../src/app/index.js';
import { apiKeys, users } from '../../src/db/schema/accounts.js';
import { sha256Hex } from '../../src/lib/secrets.js';
import type { ServiceParts } from '../../src/app/index.js';
import { mintSession } from '../../src/features/accounts/sessions/session-service.js';
import type { Logger } from '../../src/lib/logger.js';
import { serve, type Listening } from '../../src/runtime/serve.js';

/** The panel's host: the bench user's session is minted for it. */
export const PANEL_HOST = 'panel.felis.test';

export async function serveWithSignedInUser(deps: ServiceParts, log: Logger): Promise<{ internal: Listening; external: Listening; cookie: string; apiKey: string }> {
  const now = new Date();
  const [user] = await deps.database.db.insert(users).values({ username: 'bench', createdAt: now, updatedAt: now }).returning();
  const { token } = await mintSession(deps, deps.database.db, { userId: user!.id, host: PANEL_HOST, method: 'passkey' });
  // The same user's API key (issue 42), stored as the routes store one: its hash only.
  const apiKey = `felis_bench${'k'.repeat(40)}`;
  await deps.database.db.insert(apiKeys).values({ userId: user!.id, name: 'bench', prefix: apiKey.slice(0, 12), secretHash: sha256Hex(apiKey), scopes: ['read', 'write'], createdAt: now });
  const apps = createApps(deps);
  const internal = await serve({ fetch: apps.internal.fetch, port: 0, host: '127.0.0.1', log });
  const external = await serve({ fetch: apps.external.fetch, port: 0, host: '127.0.0.1', log });
  return { internal, external, cookie: `svc_session=${token}`, apiKey };
}
