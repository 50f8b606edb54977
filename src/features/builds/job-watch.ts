import type { V1Job } from '@kubernetes/client-node';
import { LABEL_DOMAIN } from '../../adapters/cluster/types.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { failedBuildOf } from './kubernetes-job.js';
import { moveBuild } from './service.js';

export interface BuildJobWatcher {
  watchJobs(labelSelector: string, onEvent: (type: string, job: V1Job) => void): { stop(): void };
}

/**
 * On Kubernetes a build Job reports its own progress over the internal face; one that dies before
 * it can (its deadline passed, a container crashed) is seen here and its build failed with the
 * Job's reason. A build already terminal (it reported, or was cancelled) is left as it is.
 */
export function watchBuildJobs(deps: Pick<Deps, 'database' | 'clock' | 'log'>, jobs: BuildJobWatcher): () => void {
  const watch = jobs.watchJobs(`${LABEL_DOMAIN}/build-id`, (_type, job) => {
    const failed = failedBuildOf(job);
    if (!failed) return;
    moveBuild(deps, failed.buildId, 'failed', { error: failed.reason }).catch((err: unknown) => {
      if (err instanceof DomainError && (err.code === 'conflict' || err.code === 'not_found')) return;
      deps.log.warn({ err, build_id: failed.buildId }, 'a failed build Job could not fail its build');
    });
  });
  return () => watch.stop();
}
