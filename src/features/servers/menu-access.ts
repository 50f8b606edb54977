import { z } from '@hono/zod-openapi';
import type { Deps } from '../../deps.js';
import type { AppDeps } from '../../http/env.js';
import type { Queryable } from '../../db/client.js';
import { findUserByMcUuid } from '../accounts/index.js';
import { CheckedRows } from '../accounts/keys/index.js';
import { allowlistedServers } from './allowlist/index.js';
import { ownerOf, ownersOf } from './ownership/index.js';
import { ownerOrStaff, serverByName, syncedCache } from './core/index.js';
import { isRetiring, retiringServers } from './retirement.js';
import type { Asker, CachedServer, ServerCache, ServerMenu, ServersParts } from './core/index.js';

/**
 * What a player may do with each tile of the lobby menu, with the wake's own gates behind each one
 * (the verdicts the original proxy's `menuAccess` reads).
 */
export const MENU_VERDICTS = ['owner', 'wake', 'owner_only', 'allowlist', 'retiring', 'start_failed'] as const;
export type MenuVerdict = (typeof MENU_VERDICTS)[number];

export const MenuAccessResponse = z
  .object({ servers: z.record(z.string(), z.enum(MENU_VERDICTS)) })
  .openapi('MenuAccess');

type MenuDeps = Pick<Deps, 'database' | 'cluster' | 'config'> & Pick<AppDeps, 'answeredWrites'> & ServersParts;

/** A server's menu facts from the database, and the menu's text once made from them. */
interface ClaimFacts {
  /** No owner and no pending retirement: an ownerless server on its way out is not claimable. */
  claimable: boolean;
  /** The answer made from these facts and that cache entry (an entry is replaced on every change, never altered). */
  answer?: { entry: CachedServer; text: string };
}

/** Every claim and every pending retirement: menu-access's view of the fleet's owners. */
interface FleetClaims {
  owners: Map<string, string>;
  retiring: Set<string>;
}

/** A player as menu-access judges them: the linked account (when enabled) and the allowlists naming them. */
interface PlayerFacts {
  linked: Asker | undefined;
  allowlisted: Set<string>;
}

async function claimFactsOf(db: Queryable, name: string): Promise<ClaimFacts> {
  const [owner, retiring] = await Promise.all([ownerOf(db, name), isRetiring(db, name)]);
  return { claimable: owner === undefined && !retiring };
}

async function fleetClaimsOf(db: Queryable): Promise<FleetClaims> {
  const [owners, retiring] = await Promise.all([ownersOf(db), retiringServers(db)]);
  return { owners, retiring };
}

async function playerFactsOf(db: Queryable, mcUuid: string): Promise<PlayerFacts> {
  const [player, allowlisted] = await Promise.all([findUserByMcUuid(db, mcUuid), allowlistedServers(db, mcUuid)]);
  return { linked: player && !player.disabled ? { userId: player.id, role: player.role } : undefined, allowlisted };
}

/**
 * The proxy's two menu reads (a server's menu entry on every connection to the lobby, a player's
 * verdicts on every menu open), answered from memory: the server from the watch-fed cache, the
 * database's facts (claims, retirements, the player's account and allowlists) from what a read of
 * this replica found at most `SESSION_CACHE_MS` ago (0: read on every request, as the tests do).
 * What keeps them right:
 * - every write request answered on this replica (a claim, a release, an allowlist or retirement
 *   change, a link) forgets them all (`AnsweredWrites`), and a read in flight across that is not
 *   kept (CheckedRows' epoch);
 * - a change made on another replica or by a background task counts here within that bound, as a
 *   sign-out does where the change feed is lost;
 * - the server's own figures are never kept: a menu's text is reused only for the cache entry it
 *   was made from.
 * Synchronous when the cache is synced and the facts are kept, so the answer needs no promise.
 * One per internal face (the route factory makes it), never module-level.
 */
export class MenuAnswers {
  readonly #claims = new CheckedRows<ClaimFacts>(undefined);
  readonly #fleet = new CheckedRows<FleetClaims>(undefined);
  readonly #players = new CheckedRows<PlayerFacts>(undefined);
  /** The reads under way, by key: the requests that miss while one runs wait for it instead of reading too. */
  readonly #reading = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: MenuDeps) {
    deps.answeredWrites?.subscribe(() => {
      this.#claims.forgetAll();
      this.#fleet.forgetAll();
      this.#players.forgetAll();
      // A read begun before the write must not answer a request that came after it.
      this.#reading.clear();
    });
  }

  /**
   * One read at a time per key: when the kept facts expire under load, the fifty requests that
   * miss before the first read is back share it (each made its own before, on a busy proxy
   * about one query per connection each second).
   */
  #shared<T>(key: string, read: () => Promise<T>): Promise<T> {
    const under = this.#reading.get(key) as Promise<T> | undefined;
    if (under !== undefined) return under;
    const reading = read().finally(() => {
      if (this.#reading.get(key) === reading) this.#reading.delete(key);
    });
    this.#reading.set(key, reading);
    return reading;
  }

  /** A server's menu entry as JSON text (as `c.json` writes a `ServerMenu`); 404 for unknown and reserved servers. */
  menu(name: string): string | Promise<string> {
    const found = serverByName(this.deps, name);
    return found instanceof Promise ? found.then((server) => this.#menuOf(name, server)) : this.#menuOf(name, found);
  }

  /** A player's verdicts as JSON text (as `c.json` writes `{ servers }`); 503 while the cluster cannot be listed. */
  menuAccess(mcUuid: string): string | Promise<string> {
    const cache = this.deps.serverCache;
    if (!cache.synced) return syncedCache(this.deps).then((synced) => this.#accessOf(synced, mcUuid));
    return this.#accessOf(cache, mcUuid);
  }

  #menuOf(name: string, server: CachedServer): string | Promise<string> {
    const facts = this.#claims.read(name, this.deps.config.sessionCacheMs, () => this.#shared(`server:${name}`, () => claimFactsOf(this.deps.database.db, name)));
    return facts instanceof Promise ? facts.then((read) => menuText(name, server, read!)) : menuText(name, server, facts);
  }

  #accessOf(cache: ServerCache, mcUuid: string): string | Promise<string> {
    const maxAgeMs = this.deps.config.sessionCacheMs;
    const { db } = this.deps.database;
    const fleet = this.#fleet.read('', maxAgeMs, () => this.#shared('fleet', () => fleetClaimsOf(db)));
    const player = this.#players.read(mcUuid, maxAgeMs, () => this.#shared(`player:${mcUuid}`, () => playerFactsOf(db, mcUuid)));
    if (fleet instanceof Promise || player instanceof Promise) {
      return Promise.all([fleet, player]).then(([claims, facts]) => JSON.stringify({ servers: verdictsOf(cache, claims!, facts!) }));
    }
    return JSON.stringify({ servers: verdictsOf(cache, fleet, player) });
  }
}

/** The menu's text for this cache entry, made once per entry and facts. */
function menuText(name: string, server: CachedServer, facts: ClaimFacts): string {
  if (facts.answer?.entry === server) return facts.answer.text;
  const { info } = server;
  const menu: ServerMenu = { name, phase: info.phase, ready: info.ready, playersOnline: info.playersOnline, playersMax: info.playersMax, claimable: facts.claimable };
  const text = JSON.stringify(menu);
  facts.answer = { entry: server, text };
  return text;
}

/** One verdict per server that is a menu tile (servers reserved for the platform are not), in one pass over the cache. */
function verdictsOf(cache: ServerCache, { owners, retiring }: FleetClaims, { linked, allowlisted }: PlayerFacts): Record<string, MenuVerdict> {
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
