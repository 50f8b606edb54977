/**
 * A dependency (database, cluster, mail relay, registry, identity source, RCON, backup store) that
 * is down or does not answer in time. Adapters throw it; the HTTP edge answers 503 `unavailable`
 * with `Retry-After`, wherever in an error's cause chain it is found, so a driver's or an ORM's
 * wrapping never turns an outage into a 500.
 */
export class DependencyUnavailable extends Error {
  override readonly name = 'DependencyUnavailable';

  constructor(
    readonly dependency: string,
    detail: string,
    /** Seconds a client should wait before trying again. */
    readonly retryAfterSeconds = 5,
    options: { cause?: unknown } = {},
  ) {
    super(`${dependency} unavailable: ${detail}`, options);
  }
}

/** The DependencyUnavailable in `err`'s cause chain, if any. */
export function findUnavailable(err: unknown): DependencyUnavailable | undefined {
  for (let at = err, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    if (at instanceof DependencyUnavailable) return at;
  }
  return undefined;
}
