import type { Deps } from '../../deps.js';
import { displayIdentities } from '../accounts/index.js';
import type { CachedServer } from './core/index.js';
import { ownersOf, serversOwnedBy } from './ownership/index.js';
import type { MemberPermission } from './core/index.js';
import { membershipsOf } from './ownership/index.js';
import { syncedCache } from './core/index.js';
import { retiringByServer } from './retirement.js';
import type { FleetServer, MyServerView, RetiringView, ServerInfo } from './core/index.js';
import type { ServersParts } from './core/index.js';

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Every server as the proxy lists it, from the cache. */
export async function allServers(deps: Pick<Deps, 'cluster' | 'config'> & ServersParts): Promise<ServerInfo[]> {
  const cache = await syncedCache(deps);
  const servers = [];
  for (const server of cache.all()) servers.push(server.info);
  return servers;
}

/**
 * The operator's fleet: every server, system ones included. Ownership comes from the database and
 * display identities from the accounts feature, both best effort: when either fails the row says
 * `ownerUnknown` and is not claimable.
 */
export async function fleet(deps: Pick<Deps, 'database' | 'cluster' | 'config' | 'log'> & ServersParts, userId: string): Promise<FleetServer[]> {
  const cache = await syncedCache(deps);
  const servers = [...cache.all()];
  let owners: Map<string, string> | undefined;
  let identities = new Map<string, string>();
  let retiring = new Map<string, RetiringView>();
  try {
    owners = await ownersOf(deps.database.db);
    identities = await displayIdentities(deps.database.db, [...owners.values()]);
    retiring = await retiringByServer(deps.database.db);
  } catch (err) {
    deps.log.warn({ err }, 'fleet owner lookup failed');
  }
  return servers.map((server) => withRetiring(fleetRow(server, userId, owners, identities), retiring)).sort(byName);
}

/** The row with its pending retirement, as the original shows a retiring server in its lists. */
function withRetiring<T extends { name: string; retiring?: RetiringView }>(row: T, retiring: Map<string, RetiringView>): T {
  const pending = retiring.get(row.name);
  if (pending) row.retiring = pending;
  return row;
}

function fleetRow(
  server: CachedServer,
  userId: string,
  owners: Map<string, string> | undefined,
  identities: Map<string, string>,
): FleetServer {
  const ownerId = owners?.get(server.info.name);
  const row: FleetServer = {
    ...server.info,
    owned: ownerId !== undefined && ownerId === userId,
    claimable: owners !== undefined && ownerId === undefined && !server.system,
    system: server.system,
  };
  if (ownerId !== undefined) {
    const identity = identities.get(ownerId);
    if (identity !== undefined) row.owner = identity;
    else row.ownerUnknown = true;
  } else if (owners === undefined) {
    row.ownerUnknown = true;
  }
  return row;
}

/**
 * The caller's servers: those they own and those shared with them (from the database, so they are
 * listed even while the cluster cannot be reached; a shared one with `member: true` and its
 * permissions) and the unclaimed ones they could claim. Live fields are best effort.
 */
export async function myServers(deps: Pick<Deps, 'database' | 'cluster' | 'config' | 'log'> & ServersParts, userId: string): Promise<MyServerView[]> {
  const [owned, shared] = await Promise.all([serversOwnedBy(deps.database.db, userId), membershipsOf(deps.database.db, userId)]);
  const asMember = (row: MyServerView, permissions: MemberPermission[]): MyServerView => ({ ...row, owned: false, claimable: false, member: true, permissions });
  const unreachableRow = (name: string, subdomain: string): MyServerView => ({
    name,
    subdomain,
    owned: true,
    claimable: false,
    playersOnline: 0,
    playersMax: 0,
  });
  let cache: Awaited<ReturnType<typeof syncedCache>> | undefined;
  try {
    cache = await syncedCache(deps);
  } catch (err) {
    deps.log.warn({ err }, 'my servers: cluster unreachable, listing owned servers only');
  }
  const rows: MyServerView[] = [];
  if (!cache) {
    for (const [name, subdomain] of owned) rows.push(unreachableRow(name, subdomain));
    for (const [name, { subdomain, permissions }] of shared) rows.push(asMember(unreachableRow(name, subdomain), permissions));
    return rows.sort(byName);
  }
  const retiring = await retiringByServer(deps.database.db);
  for (const [name, subdomain] of owned) {
    const server = cache.get(name);
    rows.push(withRetiring(server ? myRow(server, true, false) : unreachableRow(name, subdomain), retiring));
  }
  for (const [name, { subdomain, permissions }] of shared) {
    const server = cache.get(name);
    rows.push(withRetiring(asMember(server ? myRow(server, true, false) : unreachableRow(name, subdomain), permissions), retiring));
  }
  const others = [...cache.all()].filter((s) => !s.system && !owned.has(s.info.name) && !shared.has(s.info.name));
  const otherOwners = await ownersOf(
    deps.database.db,
    others.map((s) => s.info.name),
  );
  for (const server of others) {
    // An ownerless server on its way out is not claimable (the claim is refused); its retirement is
    // owner detail, shown on the rows the caller owns only (the original's MyServerView).
    if (!otherOwners.has(server.info.name)) rows.push(myRow(server, false, !retiring.has(server.info.name)));
  }
  return rows.sort(byName);
}

function myRow(server: CachedServer, owned: boolean, claimable: boolean): MyServerView {
  const { info } = server;
  const row: MyServerView = {
    name: info.name,
    subdomain: info.subdomain,
    owned,
    claimable,
    playersOnline: info.playersOnline,
    playersMax: info.playersMax,
    phase: info.phase,
  };
  if (info.displayName) row.displayName = info.displayName;
  if (owned) {
    if (info.desiredState) row.desiredState = info.desiredState;
    if (info.autostartPolicy) row.autostartPolicy = info.autostartPolicy;
    if (info.playerCountUnknown) row.playerCountUnknown = true;
    if (info.autoRestarts) row.autoRestarts = info.autoRestarts;
    if (info.startGaveUp) row.startGaveUp = true;
  }
  return row;
}
