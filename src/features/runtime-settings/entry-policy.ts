import { z } from '@hono/zod-openapi';
import type { Queryable } from '../../db/client.js';
import { readStored, revisionText } from './revisioned.js';

export const ENTRY_POLICY_KEY = 'player_entry_policy';

export const ENTRY_MODES = ['lobby', 'direct', 'domain'] as const;
export const OFFLINE_ACTIONS = ['wake', 'fallback', 'disconnect'] as const;
export const WAITING_SPACES = ['login', 'lobby'] as const;

/** How players enter: the owner's choice, read by the proxy and the login limbo (the original's fields). */
export const EntryPolicyFields = {
  mode: z.enum(ENTRY_MODES),
  defaultServer: z.string().max(64).default(''),
  requireAccountLink: z.boolean(),
  offlineAction: z.enum(OFFLINE_ACTIONS),
  waitingSpace: z.enum(WAITING_SPACES),
  fallbackServer: z.string().max(64).default(''),
};

const StoredEntryPolicy = z.object(EntryPolicyFields);
export type EntryPolicy = z.infer<typeof StoredEntryPolicy>;

/** Until the owner saves one: host routing and the account link, as before there was a policy (the original's default). */
export const DEFAULT_ENTRY_POLICY: EntryPolicy = {
  mode: 'domain',
  defaultServer: '',
  requireAccountLink: true,
  offlineAction: 'wake',
  waitingSpace: 'lobby',
  fallbackServer: '',
};

/**
 * Why a policy cannot be saved, or undefined when it can (the original's rules). `isServerName`
 * says whether a name may be a target: a well-formed name that is not a platform server.
 */
export function entryPolicyProblem(p: EntryPolicy, isServerName: (name: string) => boolean): string | undefined {
  if (p.requireAccountLink && p.waitingSpace !== 'lobby') return 'requireAccountLink needs waitingSpace lobby';
  if (p.mode === 'direct' && p.defaultServer === '') return 'mode direct needs a defaultServer';
  if (p.offlineAction === 'fallback' && (p.fallbackServer === '' || p.fallbackServer === p.defaultServer)) {
    return 'offlineAction fallback needs a fallbackServer other than the defaultServer';
  }
  for (const name of [p.defaultServer, p.fallbackServer]) {
    if (name !== '' && !isServerName(name)) return `${name} is not a server that players may be sent to`;
  }
  return undefined;
}

export interface EntryPolicyView extends EntryPolicy {
  revision: string;
}

/** The policy in force and its revision. A stored value that no longer parses fails closed (an error, never the default). */
export async function readEntryPolicy(db: Queryable, isServerName: (name: string) => boolean): Promise<EntryPolicyView> {
  const stored = await readStored(db, ENTRY_POLICY_KEY);
  if (!stored) return { ...DEFAULT_ENTRY_POLICY, revision: revisionText(stored) };
  const parsed = StoredEntryPolicy.safeParse(stored.value);
  if (!parsed.success || entryPolicyProblem(parsed.data, isServerName) !== undefined) {
    throw new Error('the stored player entry policy is invalid');
  }
  return { ...parsed.data, revision: revisionText(stored) };
}
