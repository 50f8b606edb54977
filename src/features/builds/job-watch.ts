import type { BuildJobs } from '../../adapters/cluster/build-jobs.js';
import type { BackgroundTask } from '../../coordination/index.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { moveBuild } from './service.js';

/**
 * In the cluster a build Job reports its own progress over the internal face; one that dies before
 * it can (its deadline passed, a container crashed) is seen here and its build failed with the
 * Job's reason. A build already terminal (it reported, or was cancelled) is left as it is.
 */
export function buildJobWatch(deps: Pick<Deps, 'database' | 'clock' | 'log'>, jobs: Pick<BuildJobs, 'watchFailed'>): BackgroundTask {
  let watch: { stop(): void } | undefined;
  return {
    name: 'build_jobs',
    start() {
      watch = jobs.watchFailed((failed) => {
        moveBuild(deps, failed.buildId, 'failed', { error: failed.reason }).catch((err: unknown) => {
          if (err instanceof DomainError && (err.code === 'conflict' || err.code === 'not_found')) return;
          deps.log.warn({ err, build_id: failed.buildId }, 'a failed build Job could not fail its build');
        });
      });
    },
    async stop() {
      watch?.stop();
      watch = undefined;
    },
  };
}
