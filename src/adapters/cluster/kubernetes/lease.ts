import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/logger.js';
import type { LeaderLock } from '../types.js';
import { resumableWatch, type ResumableWatch } from './watch.js';

/**
 * client-go's leader-election timing (the kube-controller-manager's defaults): a lease lasts 15 s,
 * the leader must renew within 10 s or step down, and every candidate tries every 2 s.
 */
export interface LeaseTiming {
  /** Whole seconds (the Lease's `leaseDurationSeconds`). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}
export const LEASE_TIMING: Readonly<LeaseTiming> = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

export interface LeaseLockOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** This replica's identity in `holderIdentity` (unique per process life). */
  identity: string;
  timing?: Partial<LeaseTiming>;
  log?: Logger;
  /** Called when this replica starts or stops leading (a step-down included). */
  onChange?(leading: boolean): void;
}

/**
 * Leadership by a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does it, so the
 * replica that leads is one that reaches the API server it acts on:
 * - a candidate takes the Lease when it has no holder or when its record has not changed for a
 *   lease duration by the candidate's own clock (the time it last saw the record change; so the
 *   replicas' clocks need not agree). Besides its reads every retry period, it watches the one
 *   Lease, so it sees each renewal as it happens rather than up to a retry period late, and
 *   `nextTryInMs` tells its loop to try again the moment the record lapses rather than at the
 *   next retry after it: a lost leader is replaced a lease duration after its last renewal, not up
 *   to two retry periods later. A watch that fails or stalls costs only that precision: every try
 *   still reads the record and takes it only if its version is the one seen a lease ago;
 * - the leader renews on its own timer, every retry period, each attempt bounded by the renew
 *   deadline; when no renewal has succeeded for the renew deadline (counted from when that renewal
 *   was sent, so a slow answer never lengthens it) it steps down at once (before the lease runs
 *   out for the others), and tries again as a candidate;
 * - every write carries the resourceVersion it read, so two candidates never both win;
 * - a clean stop gives the Lease up (holder cleared) so another replica takes over at once.
 */
export class LeaseLock implements LeaderLock {
  readonly #o: LeaseLockOptions;
  readonly #t: LeaseTiming;
  readonly #api: CoordinationV1Api;
  #observed: V1Lease | undefined;
  #observedVersion = '';
  /** performance.now() when the record was last seen to change. */
  #observedAt = 0;
  /** performance.now() of the last successful take or renewal; undefined while not leading. */
  #renewedAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<boolean> | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #leading = false;
  #watch: ResumableWatch | undefined;
  /** Released: no watch until the next try. */
  #released = false;
  /** Times this replica began leading (tests and the bench count changes). */
  transitions = 0;

  constructor(options: LeaseLockOptions) {
    this.#o = options;
    this.#t = { ...LEASE_TIMING, ...options.timing };
    this.#api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  get identity(): string {
    return this.#o.identity;
  }

  /** Tries every retry period from now on, on its own timer (independent of the work it guards). */
  start(): void {
    if (this.#timer) return;
    const loop = () => {
      void this.acquire().finally(() => {
        if (this.#timer) this.#timer = setTimeout(loop, this.nextTryInMs()).unref();
      });
    };
    this.#timer = setTimeout(loop, 0).unref();
  }

  /** One try to take or renew; resolves whether this replica leads. Tries never overlap. */
  acquire(): Promise<boolean> {
    const sentAt = performance.now();
    this.#released = false;
    this.#inFlight ??= this.#tryAcquireOrRenew()
      .catch((err: unknown) => {
        this.#o.log?.warn({ err, lease: this.#o.name }, 'leader lease: take or renewal failed');
        return false;
      })
      .then((ok) => {
        if (ok) {
          this.#renewedAt = sentAt;
          // The step-down happens at the deadline even while a renewal hangs.
          clearTimeout(this.#deadline);
          this.#deadline = setTimeout(() => this.#update(), Math.max(0, sentAt + this.#t.renewDeadlineMs - performance.now()) + 1).unref();
        }
        this.#update();
        return this.holds();
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }

  /**
   * When the next try is worth making: a retry period from now, or sooner, the moment the
   * holder's record lapses by this replica's clock (once; a try at the lapse that failed waits a
   * retry period like any other).
   */
  nextTryInMs(): number {
    const holder = this.#observed?.spec?.holderIdentity;
    if (this.#leading || !holder || holder === this.#o.identity) return this.#t.retryPeriodMs;
    const lapsesIn = this.#observedAt + this.#durationMs(this.#observed) - performance.now();
    return lapsesIn >= 0 ? Math.min(this.#t.retryPeriodMs, lapsesIn + 1) : this.#t.retryPeriodMs;
  }

  /** Leads, and has renewed within the renew deadline: checked before each write it guards. */
  holds(): boolean {
    this.#update();
    return this.#leading;
  }

  #update(): void {
    const leading = this.#renewedAt !== undefined && performance.now() - this.#renewedAt < this.#t.renewDeadlineMs;
    if (!leading) this.#renewedAt = undefined;
    if (leading === this.#leading) return;
    this.#leading = leading;
    if (leading) this.transitions += 1;
    this.#o.log?.info({ lease: this.#o.name, identity: this.#o.identity }, leading ? 'leader lease: leading' : 'leader lease: stepped down');
    this.#o.onChange?.(leading);
  }

  /** Stops trying; a leader gives the Lease up so that another replica takes it without waiting. */
  async release(): Promise<void> {
    clearTimeout(this.#timer);
    clearTimeout(this.#deadline);
    this.#timer = undefined;
    await this.#inFlight;
    this.#released = true;
    this.#watch?.stop();
    this.#watch = undefined;
    const wasLeading = this.#leading;
    this.#renewedAt = undefined;
    this.#update();
    if (!wasLeading || !this.#observed) return;
    try {
      await this.#bounded(
        this.#api.replaceNamespacedLease({
          name: this.#o.name,
          namespace: this.#o.namespace,
          body: { ...this.#observed, spec: { ...this.#observed.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new V1MicroTime() } },
        }),
      );
    } catch (err) {
      this.#o.log?.warn({ err, lease: this.#o.name }, 'leader lease: not released; it lapses instead');
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, identity } = this.#o;
    const now = new V1MicroTime();
    let current: V1Lease;
    try {
      current = await this.#bounded(this.#api.readNamespacedLease({ name, namespace }));
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
      const created = await this.#bounded(
        this.#api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: { holderIdentity: identity, leaseDurationSeconds: Math.ceil(this.#t.leaseDurationMs / 1000), acquireTime: now, renewTime: now, leaseTransitions: 0 },
          },
        }),
      );
      this.#see(created);
      return true;
    }
    this.#see(current);
    const holder = current.spec?.holderIdentity;
    if (holder && holder !== identity && performance.now() - this.#observedAt < this.#durationMs(current)) return false;
    const mine = holder === identity;
    const updated = await this.#bounded(
      this.#api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...current,
          spec: {
            ...current.spec,
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(this.#t.leaseDurationMs / 1000),
            acquireTime: mine && current.spec?.acquireTime ? new V1MicroTime(current.spec.acquireTime) : now,
            renewTime: now,
            leaseTransitions: (current.spec?.leaseTransitions ?? 0) + (mine ? 0 : 1),
          },
        },
      }),
    );
    this.#see(updated);
    return true;
  }

  #durationMs(lease: V1Lease | undefined): number {
    return (lease?.spec?.leaseDurationSeconds ?? Math.ceil(this.#t.leaseDurationMs / 1000)) * 1000;
  }

  #see(lease: V1Lease): void {
    const version = lease.metadata?.resourceVersion ?? '';
    if (version !== this.#observedVersion) {
      // A version older than the one seen (a read answered after a watch event) changes nothing.
      if (this.#observedVersion && Number(version) < Number(this.#observedVersion)) return;
      this.#observedVersion = version;
      this.#observedAt = performance.now();
    }
    this.#observed = lease;
    this.#watchFrom(version);
  }

  /** Watches the one Lease from `version` on, while this lock is in use; a watch that expired starts again at the next read. */
  #watchFrom(version: string): void {
    if (this.#watch || this.#released) return;
    const { kubeConfig, namespace, name, log } = this.#o;
    const watch = resumableWatch<V1Lease>({
      kubeConfig,
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      query: { fieldSelector: `metadata.name=${name}` },
      fromVersion: version,
      onEvent: (type, lease) => {
        if (type !== 'DELETED') this.#see(lease);
      },
      onExpired: () => {
        if (this.#watch === watch) this.#watch = undefined;
      },
      ...(log ? { log } : {}),
    });
    this.#watch = watch;
  }

  /** An API call that must answer within the renew deadline (a hung API server is a failed try). */
  #bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the API server did not answer within ${this.#t.renewDeadlineMs} ms`)), this.#t.renewDeadlineMs);
    });
    return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
  }
}
