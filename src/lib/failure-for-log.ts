/**
 * An unexpected error as the log may show it. A failed statement's error (Drizzle's
 * DrizzleQueryError) carries its bound parameters, in its message and in a field: session token
 * hashes, addresses and names. The log keeps the statement and the driver's own error, never them.
 */
export function failureForLog(err: unknown): unknown {
  if (!(err instanceof Error) || !('params' in err) || !('query' in err)) return err;
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const logged = new Error(`Failed query: ${String(err.query)}`, { cause: cause && failureForLog(cause) });
  logged.name = err.name;
  const frames = (err.stack ?? '').split('\n').filter((line) => line.startsWith('    at '));
  logged.stack = [`${logged.name}: ${logged.message}`, ...frames].join('\n');
  const code = cause && (cause as { code?: unknown }).code;
  return Object.assign(logged, code === undefined ? {} : { code });
}
