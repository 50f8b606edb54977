/**
 * postgres-js (3.4.9) reads the server's array types as each connection opens, in a promise it
 * never awaits (`fetchArrayTypes`, returned from a message handler and dropped). When the server
 * drops the connection at that moment — a database going down or coming back, a backend
 * terminated — the failure is an unhandled rejection that no caller can catch, and Node ends the
 * process on one (porsager/postgres#1192, #1205, #1223, open). The query the connection was
 * opened for fails on its own and is answered by the database guard as any outage is; the
 * dropped promise carries nothing else. This recognises that rejection, so the process entry
 * (src/main.ts) and the test runner (vitest.config.ts) can log it instead of dying on it.
 */
export function isDriverTypeFetchFailure(reason: unknown): boolean {
  if (typeof reason !== 'object' || reason === null) return false;
  const query = (reason as { query?: unknown }).query;
  return typeof query === 'string' && /\bb\.typarray\b/.test(query) && /\bpg_catalog\.pg_type\b/.test(query);
}
