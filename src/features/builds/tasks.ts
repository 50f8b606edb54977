import type { BuildJobs } from '../../adapters/cluster/build-jobs.js';
import { Leadership, type BackgroundTask } from '../../coordination/index.js';
import type { Deps } from '../../deps.js';
import { buildJobWatch } from './job-watch.js';
import { BuildLogCopier } from './log-copy.js';

/**
 * The background tasks of builds that run as Jobs of the cluster: the watch that fails a build
 * whose Job died before it reported, and the copy of the Jobs' steps into the build log by one
 * replica at a time (the simulated runner writes its log itself).
 */
export function clusterBuildTasks(deps: Pick<Deps, 'database' | 'clock' | 'log' | 'replica'>, jobs: BuildJobs): BackgroundTask[] {
  const leadership = new Leadership({ db: deps.database.db, clock: deps.clock, replica: deps.replica }, { name: 'build_logs' });
  return [buildJobWatch(deps, jobs), new BuildLogCopier(deps, { jobs, leadership })];
}
