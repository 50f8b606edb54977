import { join } from 'node:path';
import { createBackupStore } from '../../../adapters/backup-store/index.js';
import type { BackupStore } from '../../../adapters/backup-store/types.js';
import { SimulatedWorldFolders } from '../../../adapters/cluster/simulated-worlds.js';
import { ClusterNotFoundError, type ClusterAdapter } from '../../../adapters/cluster/types.js';
import type { WorldFileOps } from '../../../adapters/cluster/world-files.js';
import type { WorldJobRunner } from '../../../adapters/cluster/world-jobs.js';
import type { Config } from '../../../config.js';
import { systemClock, type Clock } from '../../../lib/clock.js';
import type { Logger } from '../../../lib/logger.js';
import { MAX_WAITING, WorldWriteLines } from './write-queue.js';

/**
 * The world jobs this process runs (their promises, so a test or a shutdown can wait for them) and
 * the waiting lines of its short file writes, one per world: both live as long as the runtime.
 */
export class JobTracker {
  readonly #running = new Set<Promise<unknown>>();
  readonly #endedListeners = new Set<(jobId: string) => void>();
  readonly writeLines = new WorldWriteLines(MAX_WAITING);

  /**
   * Calls `listener` with the id of each world job this process records as ended (its own, one it
   * settles for a gone starter, one it fails because its replica died): what waits on a job (a
   * scheduled backup's run) goes on at once, not at its next round. Resolves the unsubscribe.
   */
  onEnded(listener: (jobId: string) => void): () => void {
    this.#endedListeners.add(listener);
    return () => this.#endedListeners.delete(listener);
  }

  /** This process recorded the end of these jobs. */
  ended(...jobIds: string[]): void {
    for (const id of jobIds) for (const listener of this.#endedListeners) listener(id);
  }

  track(job: Promise<unknown>): void {
    const settled = job.then(
      () => undefined,
      () => undefined,
    );
    this.#running.add(settled);
    void settled.then(() => this.#running.delete(settled));
  }

  /** Resolves once no job of this process is running (jobs started meanwhile included). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }
}

/** Where a server's world can be reached as a local folder (the simulated cluster's volumes). */
export interface WorldFolders {
  /** The server's world now, or its volume `claim` (a move's target volume). */
  folder(serverName: string, claim?: string): Promise<string>;
  exists(serverName: string): Promise<boolean>;
  release(serverName: string, claim?: string): Promise<void>;
}

export interface WorldsRuntime {
  store: BackupStore;
  /** Absent when worlds live on cluster volumes this process cannot reach (Kubernetes). */
  folders?: WorldFolders;
  jobs: JobTracker;
  /** The file routes' operations when `folders` is absent (a Job per operation on Kubernetes). */
  files?: WorldFileOps;
  /** Runs world jobs; absent: in this process on `folders`. */
  runner?: WorldJobRunner;
  /** Why world jobs cannot run here (the 503's message), when neither runner nor folders is set. */
  unavailable?: string;
}

/** The worlds feature's part of the service: what its services and the features above it are handed. */
export interface WorldsParts {
  /** World archives (the backup store), world folders and the world jobs of this process. */
  worlds: WorldsRuntime;
}

/** Why world jobs cannot run on Kubernetes with a local store (a Job's pod cannot reach this process's disk). */
export const KUBERNETES_NEEDS_S3 =
  'World backups, restores and exports on Kubernetes need an S3 backup store (BACKUP_S3_BUCKET and the other BACKUP_S3_* settings): a Job cannot reach this service\'s local disk.';

/** A simulated cluster with node-local volumes: a moved world is the folder of its move's claim. */
function volumeResolver(cluster: Partial<Pick<ClusterAdapter, 'nodes'>>) {
  const volumes = cluster.nodes?.volumes;
  return volumes && (async (serverName: string) => {
    try {
      return (await volumes.current(serverName)).claim;
    } catch (err) {
      if (err instanceof ClusterNotFoundError) return undefined; // no server (yet): the default folder
      throw err;
    }
  });
}

export function createWorldsRuntime(
  config: Config,
  cluster: Pick<ClusterAdapter, 'worldJobs'> & Partial<Pick<ClusterAdapter, 'nodes'>>,
  options: { log: Logger; signal?: AbortSignal; clock?: Clock },
): WorldsRuntime {
  const store = createBackupStore(config);
  const clusterJobs = cluster.worldJobs?.({
    image: config.worldJobImage,
    storeSecret: config.worldJobStoreSecret,
    deadlineSeconds: config.worldJobDeadlineSeconds,
    log: options.log,
    clock: options.clock ?? systemClock,
    signal: options.signal,
  });
  const runtime: WorldsRuntime = {
    store,
    folders: clusterJobs ? undefined : new SimulatedWorldFolders(join(config.dataDir, 'worlds'), volumeResolver(cluster)),
    jobs: new JobTracker(),
  };
  if (clusterJobs) {
    // File operations need no store: each is a Job on the claim that reports through its log.
    runtime.files = clusterJobs.files;
    if (store.kind !== 's3') runtime.unavailable = KUBERNETES_NEEDS_S3;
    else runtime.runner = clusterJobs.runner;
  }
  return runtime;
}
