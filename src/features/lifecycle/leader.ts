import { ApiException, CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import postgres from 'postgres';
import type { Clock } from '../../lib/clock.js';

/**
 * The right to act for the whole control plane: only the replica holding it runs the controller.
 * `acquire()` takes or renews it (a round trip); `holds()` answers from the last renewal without
 * one, and turns false by itself once that renewal is too old, so a replica cut off from the lock
 * stops acting before anyone else can take it.
 */
export interface LeaderLock {
  readonly kind: 'lease' | 'advisory';
  acquire(): Promise<boolean>;
  holds(): boolean;
  release(): Promise<void>;
}

export interface LeaseLockOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name?: string;
  /** This replica (the pod name). */
  identity: string;
  clock: Clock;
  /** Another replica may take the lease this long after its last renewal. */
  leaseDurationSeconds?: number;
  /** The holder stops acting when it has not renewed for this long (less than the duration). */
  renewDeadlineSeconds?: number;
}

const statusOf = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

/** A coordination.k8s.io Lease, as client-go's leader election uses it. */
export class LeaseLock implements LeaderLock {
  readonly kind = 'lease' as const;
  readonly #api: CoordinationV1Api;
  readonly #options: Required<Omit<LeaseLockOptions, 'kubeConfig'>>;
  #renewedAt: number | undefined;

  constructor(options: LeaseLockOptions) {
    this.#api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    this.#options = { name: 'felis-controller', leaseDurationSeconds: 10, renewDeadlineSeconds: 7, ...options };
  }

  holds(): boolean {
    return this.#renewedAt !== undefined && this.#now() - this.#renewedAt < this.#options.renewDeadlineSeconds * 1000;
  }

  async acquire(): Promise<boolean> {
    const { namespace, name, identity, leaseDurationSeconds } = this.#options;
    const now = this.#now();
    try {
      let lease: V1Lease | undefined;
      try {
        lease = await this.#api.readNamespacedLease({ name, namespace });
      } catch (err) {
        if (statusOf(err) !== 404) throw err;
      }
      const spec = { holderIdentity: identity, leaseDurationSeconds, renewTime: new Date(now) };
      if (!lease) {
        await this.#api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: { ...spec, acquireTime: new Date(now), leaseTransitions: 0 } } });
        return this.#won(now);
      }
      const holder = lease.spec?.holderIdentity;
      const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
      const expired = renewed + (lease.spec?.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 <= now;
      if (holder && holder !== identity && !expired) return this.#lost();
      const takeover = holder !== identity;
      // The replace carries the version read: if another replica wrote in between, it gets 409.
      await this.#api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          metadata: { ...lease.metadata, name, namespace },
          spec: {
            ...lease.spec,
            ...spec,
            ...(takeover ? { acquireTime: new Date(now), leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 } : {}),
          },
        },
      });
      return this.#won(now);
    } catch (err) {
      if (statusOf(err) === 409) return this.#lost();
      // Unreachable API: keep leading only until the renew deadline passes (holds() decides).
      return this.holds();
    }
  }

  async release(): Promise<void> {
    if (!this.holds()) return;
    this.#renewedAt = undefined;
    const { namespace, name } = this.#options;
    try {
      const lease = await this.#api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== this.#options.identity) return;
      await this.#api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: { ...lease.spec, holderIdentity: undefined, renewTime: undefined } } });
    } catch {
      // The lease runs out by itself.
    }
  }

  #won(now: number): boolean {
    this.#renewedAt = now;
    return true;
  }

  #lost(): boolean {
    this.#renewedAt = undefined;
    return false;
  }

  #now(): number {
    return this.#options.clock.now().getTime();
  }
}

export interface AdvisoryLockOptions {
  url: string;
  clock: Clock;
  /** The two int4 keys of the advisory lock. */
  keys?: [number, number];
  /** The holder stops acting when its check of the lock is older than this. */
  checkDeadlineSeconds?: number;
}

/** `felis` in ASCII, then the controller's number. */
export const CONTROLLER_LOCK_KEYS: [number, number] = [0x66656c69, 1];

/**
 * A PostgreSQL session-level advisory lock on a connection of its own. The lock lives as long as
 * that connection: each acquire checks in pg_locks that this session still holds it (a connection
 * that was cut and reopened holds nothing), so a lost lock is noticed at the next check.
 */
export class AdvisoryLock implements LeaderLock {
  readonly kind = 'advisory' as const;
  readonly #options: Required<AdvisoryLockOptions>;
  #sql: postgres.Sql | undefined;
  #checkedAt: number | undefined;

  constructor(options: AdvisoryLockOptions) {
    this.#options = { keys: CONTROLLER_LOCK_KEYS, checkDeadlineSeconds: 7, ...options };
  }

  holds(): boolean {
    return this.#checkedAt !== undefined && this.#now() - this.#checkedAt < this.#options.checkDeadlineSeconds * 1000;
  }

  async acquire(): Promise<boolean> {
    const [classid, objid] = this.#options.keys;
    const now = this.#now();
    try {
      // One connection, never recycled: the lock belongs to its session.
      this.#sql ??= postgres(this.#options.url, { max: 1, idle_timeout: 0, max_lifetime: null, connect_timeout: 5, onnotice: () => {} });
      const sql = this.#sql;
      const [held] = await sql<Array<{ held: boolean }>>`
        select exists (
          select 1 from pg_locks
          where locktype = 'advisory' and pid = pg_backend_pid() and granted
            and classid = ${classid}::int::oid and objid = ${objid}::int::oid and objsubid = 2
        ) as held`;
      if (held?.held) {
        this.#checkedAt = now;
        return true;
      }
      const [got] = await sql<Array<{ got: boolean }>>`select pg_try_advisory_lock(${classid}::int, ${objid}::int) as got`;
      this.#checkedAt = got?.got ? now : undefined;
      return got?.got === true;
    } catch {
      // The connection is gone, and the lock with it.
      this.#checkedAt = undefined;
      const sql = this.#sql;
      this.#sql = undefined;
      await sql?.end({ timeout: 1 }).catch(() => undefined);
      return false;
    }
  }

  async release(): Promise<void> {
    this.#checkedAt = undefined;
    const sql = this.#sql;
    this.#sql = undefined;
    await sql?.end({ timeout: 1 }).catch(() => undefined);
  }

  #now(): number {
    return this.#options.clock.now().getTime();
  }
}
