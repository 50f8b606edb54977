/**
 * The key of every PostgreSQL advisory lock the service takes, in one list so that no two parts of
 * it pick the same number (src/coordination/advisory.ts takes them). Each is `FEL` and two letters
 * in ASCII.
 */
export const ADVISORY_LOCKS = {
  /** Migrations at start-up (a session lock on the migrator's own connection: src/db/migrate.ts). */
  migrations: 0x46454c4953n, // "FELIS"
  /** Replicas starting together on an empty database mint one setup token between them. */
  setupToken: 0x46454c5354n, // "FELST"
  /** The live discoverable passkey sign-ins are counted against their caps one at a time. */
  discoverablePasskeys: 0x46454c504bn, // "FELPK"
  /** Wakes are counted one after another against the node's running-server cap. */
  capacity: 0x46454c4341n, // "FELCA"
} as const;
