import type { PGlite } from '@electric-sql/pglite';
import type postgres from 'postgres';
import type { DatabaseGuard } from './guard.js';

type Sql = postgres.Sql | postgres.TransactionSql;

/**
 * The postgres-js client as Drizzle uses it (`unsafe`, `begin`, `savepoint`; everything else passes
 * through), with every statement and transaction run under the guard's deadlines. Drizzle awaits a
 * statement or calls `.values()` on it first; a postgres-js query starts when it is awaited, so the
 * wrapper starts it only inside the guard.
 */
export function guardPostgres<T extends Sql>(sql: T, guard: DatabaseGuard): T {
  return new Proxy(sql, {
    get(target, prop) {
      if (prop === 'unsafe') {
        return (query: string, params?: unknown[], options?: postgres.UnsafeQueryOptions) => {
          const pending = target.unsafe(query, params as postgres.ParameterOrJSON<never>[], options);
          const run = (work: () => PromiseLike<unknown>) => guard.run(work, guard.queryDeadlineMs, () => pending.cancel());
          return {
            values: () => run(() => pending.values()),
            then: (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) => run(() => pending).then(ok, fail),
          };
        };
      }
      if (prop === 'begin' || prop === 'savepoint') {
        const open = Reflect.get(target, prop, target) as (fn: (tx: postgres.TransactionSql) => unknown) => Promise<unknown>;
        return (fn: (tx: postgres.TransactionSql) => unknown) =>
          guard.run(() => open.call(target, (tx) => fn(guardPostgres(tx, guard))), guard.transactionDeadlineMs);
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The PGlite client as Drizzle uses it (`query`, `transaction`): an in-process database cannot
 * go silent, but a closed one must answer 503 like an unreachable server, so only failures are
 * classified (no deadline: a PGlite statement cannot be cancelled and would keep it busy anyway).
 */
export function guardPglite(client: PGlite, guard: DatabaseGuard): PGlite {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === 'query' || prop === 'transaction') {
        return (...args: unknown[]) => guard.run(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), 0);
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
