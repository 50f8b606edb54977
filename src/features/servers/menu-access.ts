import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.js';
import { findUserByMcUuid } from '../accounts/index.js';
import { allowlistedServers } from './allowlist/index.js';
import { ownerOf, ownersOf } from './ownership/index.js';
import { ownerOrStaff, requireServer, syncedCache } from './core/index.js';
import { isRetiring, retiringServers } from './retirement.js';
import type { ServerMenu } from './core/index.js';
import type { ServersParts } from './core/index.js';

/** What the in-game menu shows of one server: an ownerless server on its way out is not claimable. */
export async function serverMenu(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, name: string): Promise<ServerMenu> {
  const server = await requireServer(deps, name);
  const db = deps.database.db;
  const [owner, retiring] = await Promise.all([ownerOf(db, name), isRetiring(db, name)]);
  const { info } = server;
  return { name, phase: info.phase, ready: info.ready, playersOnline: info.playersOnline, playersMax: info.playersMax, claimable: owner === undefined && !retiring };
}

/**
 * What a player may do with each tile of the lobby menu, with the wake's own gates behind each one
 * (the verdicts the original proxy's `menuAccess` reads).
 */
export const MENU_VERDICTS = ['owner', 'wake', 'owner_only', 'allowlist', 'retiring', 'start_failed'] as const;
export type MenuVerdict = (typeof MENU_VERDICTS)[number];

export const MenuAccessResponse = z
  .object({ servers: z.record(z.string(), z.enum(MENU_VERDICTS)) })
  .openapi('MenuAccess');

/** One verdict per server that is a menu tile (servers reserved for the platform are not), in one pass over the cache. */
export async function menuAccess(deps: Pick<Deps, 'database' | 'cluster' | 'config'> & ServersParts, mcUuid: string): Promise<Record<string, MenuVerdict>> {
  const db = deps.database.db;
  const cache = await syncedCache(deps);
  const [player, owners, allowlisted, retiring] = await Promise.all([
    findUserByMcUuid(db, mcUuid),
    ownersOf(db),
    allowlistedServers(db, mcUuid),
    retiringServers(db),
  ]);
  const linked = player && !player.disabled ? { userId: player.id, role: player.role } : undefined;
  const verdicts: Record<string, MenuVerdict> = {};
  for (const server of cache.all()) {
    const { spec, status } = server.resource;
    if (server.reserved) continue;
    const { owns, staff } = ownerOrStaff(owners.get(spec.name), linked);
    const policy = spec.autostartPolicy ?? 'ownerOnly';
    let verdict: MenuVerdict;
    if (retiring.has(spec.name)) verdict = 'retiring';
    else if (status.startGaveUp && spec.desiredState === 'Running') verdict = 'start_failed';
    else if (owns) verdict = 'owner';
    else if (staff || policy === 'public') verdict = 'wake';
    else if (policy === 'allowlist') verdict = allowlisted.has(spec.name) ? 'wake' : 'allowlist';
    // ownerOnly (or unset): only its owner, even while it has none (the wake answers 403 then too).
    else verdict = 'owner_only';
    verdicts[spec.name] = verdict;
  }
  return verdicts;
}
