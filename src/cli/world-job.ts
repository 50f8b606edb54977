/**
 * Runs one world job's step on a mounted world volume, in a Kubernetes Job's pod:
 *
 *   node dist/cli/world-job.js backup  --folder /data --tag <job> --key <store key>
 *   node dist/cli/world-job.js restore --folder /data --tag <job> --key <key> --sha256 <hex> [--snapshot-key <key>]
 *   node dist/cli/world-job.js export  --folder /data --tag <job> --key <key> --path <world path>
 *   node dist/cli/world-job.js files <list|read|write|delete|mkdir|rename> --folder /data --path <p> …
 *
 * `files` runs one file operation (features/worlds/volumes/file-job.ts) and prints its result as
 * marked lines, which the service reads from the pod's log; it needs no store.
 *
 * The store comes from BACKUP_S3_* (the Job's Secret), or WORLD_JOB_LOCAL_STORE (a directory; tests
 * and the simulated cluster). The outcome is one line of JSON on stdout and in the termination
 * message file (TERMINATION_LOG, by default /dev/termination-log), where the service reads it;
 * the exit code is 0 when the step succeeded, 1 when it reported a failure, 2 for bad arguments.
 * No database, no service token: the service records everything from the outcome.
 */
import { writeFile } from 'node:fs/promises';
import { LocalBackupStore } from '../adapters/backup-store/local.js';
import { createBackupStore } from '../adapters/backup-store/index.js';
import type { BackupStore } from '../adapters/backup-store/types.js';
import { volumeStepSchema, type StepOutcome, type VolumeStep } from '../adapters/cluster/world-jobs.js';
import { loadConfig } from '../config.js';
import { jobArgs } from '../lib/job-args.js';
import { runFilesCommand, runVolumeStep } from '../features/worlds/index.js';
import { runCommand } from './run-command.js';

/**
 * The store the step writes to or reads from: the service's own reading of BACKUP_S3_* (the Job's
 * Secret), or WORLD_JOB_LOCAL_STORE (a directory: tests and the simulated cluster).
 */
export function storeFromEnv(env: NodeJS.ProcessEnv): BackupStore {
  const config = loadConfig(env);
  if (config.backupS3Bucket) return createBackupStore(config);
  const local = env.WORLD_JOB_LOCAL_STORE?.trim();
  if (local) return new LocalBackupStore(local);
  throw new Error('no backup store: set BACKUP_S3_BUCKET (and the other BACKUP_S3_* keys) in the Job\'s Secret');
}

/** The step the arguments name, checked as the service's own plan is. */
export function stepFromArgs(argv: string[]): { step: VolumeStep; folder: string; tag: string } {
  const { verb: op, values, folder } = jobArgs(argv, {
    tag: { type: 'string' },
    key: { type: 'string' },
    sha256: { type: 'string' },
    'snapshot-key': { type: 'string' },
    path: { type: 'string' },
  });
  const step = volumeStepSchema.parse({
    op,
    key: values.key,
    ...(op === 'restore' ? { sha256: values.sha256, ...(values['snapshot-key'] ? { snapshotKey: values['snapshot-key'] } : {}) } : {}),
    ...(op === 'export' ? { path: values.path ?? '' } : {}),
  });
  if (!values.tag || !/^[a-z0-9-]{1,64}$/.test(values.tag)) throw new Error('--tag must be a job id');
  return { step, folder, tag: values.tag };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv[0] === 'files') {
    // Flushed before the process exits: a piped stdout is written asynchronously.
    const out = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
    return runFilesCommand(argv.slice(1), env, out, (line) => process.stderr.write(`${line}\n`));
  }
  let parsed: ReturnType<typeof stepFromArgs>;
  let store: BackupStore;
  try {
    parsed = stepFromArgs(argv);
    store = storeFromEnv(env);
  } catch (err) {
    process.stderr.write(`world-job: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const outcome: StepOutcome = await runVolumeStep(store, parsed.folder, parsed.step, {
    tag: parsed.tag,
    onError: (err) => process.stderr.write(`world-job: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`),
  });
  const line = JSON.stringify(outcome);
  process.stdout.write(`${line}\n`);
  await writeFile(env.TERMINATION_LOG ?? '/dev/termination-log', line).catch((err: unknown) =>
    process.stderr.write(`world-job: the termination message could not be written: ${String(err)}\n`),
  );
  return outcome.ok ? 0 : 1;
}

if (process.argv[1] && /world-job\.[jt]s$/.test(process.argv[1])) runCommand(() => main(process.argv.slice(2), process.env));
