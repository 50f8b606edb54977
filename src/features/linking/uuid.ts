export type AuthSource = 'primary' | 'thirdparty';

/**
 * Contract rule 1 of the account-and-player table: a name-based UUID (version 3) is the
 * per-source namespace of a third-party player, a random one (version 4) a primary id; anything
 * else counts as primary. `mcUuid` is dashed.
 */
export function authSourceOf(mcUuid: string): AuthSource {
  return mcUuid[14] === '3' ? 'thirdparty' : 'primary';
}
