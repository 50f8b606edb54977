import { randomUUID } from 'node:crypto';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { z } from 'zod';
import type { Clock } from '../../../lib/clock.js';
import { DomainError, type ErrorCode } from '../../../lib/errors.js';
import type { Logger } from '../../../lib/logger.js';
import { LABEL_DOMAIN, type PodLogLine, type PodLogOptions } from '../types.js';
import { CLIENT_CODES, contentEnv, fileOpArgs, JOB_WRITE_MAX_BYTES, readsOnly, resultOf, type FileOp } from '../world-file-protocol.js';
import { worldPathSegments, type FileDone, type FileRead, type FileRenamed, type FileWritten, type FolderListing, type WorldFileOps, type WriteOptions } from '../world-files.js';
import type { WorldVolumeRef } from '../world-volumes.js';
import { currentVolume, endOf, pinnedTo, WORLD_CONTAINER_SECURITY, WORLD_MOUNT, WORLD_POD, WORLD_SERVER_LABEL, worldClaimName } from './world-jobs.js';

/** The part of the Kubernetes adapter file Jobs use. */
export interface FileJobClient {
  createJob(body: V1Job): Promise<V1Job>;
  getJob(name: string): Promise<V1Job | undefined>;
  deleteJob(name: string): Promise<void>;
  listPods(labelSelector: string): Promise<V1Pod[]>;
  containerLog(pod: string, container: string, options: PodLogOptions): AsyncIterable<PodLogLine>;
  /** The claim holding the server's world now (world-volumes.ts); absent: the claim template's. */
  volumeOf?(serverName: string): Promise<WorldVolumeRef>;
}

export const FILES_OP_LABEL = `${LABEL_DOMAIN}/files-op`;
export const FILES_MODE_LABEL = `${LABEL_DOMAIN}/files-mode`;
export const FILES_CONTAINER = 'world-files';
/** The Job's own limit: a file operation is seconds of work, a longer one is stuck (a mount that never comes). */
export const FILE_JOB_DEADLINE_SECONDS = 60;
/** How long the service waits for a file Job: its deadline, and time for the pod to be scheduled. */
export const FILE_JOB_WAIT_MS = 90_000;

/**
 * A fresh name per operation (an editor lists, reads and saves in as many seconds), kept within
 * the 63 characters of a label value (the Job controller labels its pods with the Job's name).
 */
export function filesJobName(server: string, opId: string): string {
  const short = opId.replace(/-/g, '').slice(0, 8);
  return `felis-files-${server.slice(0, 42).replace(/-+$/, '')}-${short}`;
}

export interface FileJobOptions {
  namespace: string;
  /** This service's own image: the Job runs `node dist/cli/world-job.js files`. */
  image: string;
}

/**
 * The Job of one file operation on a server's claim: read-only for list and read, the content of
 * a write in its environment, no Secret and no service account token, as uid 1000 (the game
 * server's user) with a short deadline and small limits.
 */
export function fileJobManifest(
  server: string,
  opId: string,
  op: FileOp,
  content: Uint8Array | undefined,
  options: FileJobOptions,
  volume: WorldVolumeRef = { claim: worldClaimName(server) },
): V1Job {
  const readOnly = readsOnly(op.op);
  const labels = { 'app.kubernetes.io/part-of': 'felis', [FILES_OP_LABEL]: opId, [FILES_MODE_LABEL]: op.op, [WORLD_SERVER_LABEL]: server };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: filesJobName(server, opId), namespace: options.namespace, labels },
    spec: {
      // A failed write retried behind the caller's back would be a second write.
      backoffLimit: 0,
      activeDeadlineSeconds: FILE_JOB_DEADLINE_SECONDS,
      // Deleted once read; this only reclaims a Job whose reader died.
      ttlSecondsAfterFinished: 600,
      template: {
        metadata: { labels },
        spec: {
          ...WORLD_POD,
          ...pinnedTo(volume.node),
          volumes: [{ name: 'world', persistentVolumeClaim: { claimName: volume.claim, readOnly } }],
          containers: [
            {
              name: FILES_CONTAINER,
              image: options.image,
              command: ['node', 'dist/cli/world-job.js'],
              args: ['files', ...fileOpArgs(op, WORLD_MOUNT)],
              env: [{ name: 'NODE_ENV', value: 'production' }, ...(content ? contentEnv(content) : [])],
              volumeMounts: [{ name: 'world', mountPath: WORLD_MOUNT, readOnly }],
              // Measured (docs/notes/issue-17-kube-files.md): peak RSS ~85 MiB for a 1 MiB read.
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } },
              securityContext: WORLD_CONTAINER_SECURITY,
            },
          ],
        },
      },
    },
  };
}

const entry = z.object({ name: z.string(), size: z.number().int(), is_dir: z.boolean(), mod_time: z.string() });
const resultSchemas = {
  list: z.object({ path: z.string(), entries: z.array(entry), truncated: z.boolean(), free_bytes: z.number() }),
  read: z.object({ path: z.string(), content: z.string(), sha256: z.string(), content_sha256: z.string() }),
  write: z.object({ path: z.string(), status: z.enum(['created', 'written']), sha256: z.string() }),
  delete: z.object({ path: z.string(), status: z.string() }),
  mkdir: z.object({ path: z.string(), status: z.string() }),
  rename: z.object({ path: z.string(), to: z.string(), status: z.string() }),
};

export interface KubernetesFileOpsOptions extends FileJobOptions {
  client: FileJobClient;
  log: Logger;
  clock: Clock;
  /** How often a running Job is looked at. */
  pollMs?: number;
  /** How long to wait for a Job to end and report (default FILE_JOB_WAIT_MS). */
  waitMs?: number;
  newId?: () => string;
}

const unavailable = (why: string) => new DomainError('unavailable', `The world's files cannot be reached: ${why}.`);

/** File operations as one short Kubernetes Job each on the server's claim. */
export class KubernetesWorldFileOps implements WorldFileOps {
  readonly kind = 'kubernetes' as const;

  constructor(private readonly options: KubernetesFileOpsOptions) {}

  async list(server: string, path: string): Promise<FolderListing> {
    return this.#run(server, { op: 'list', path }, resultSchemas.list);
  }

  async read(server: string, path: string): Promise<FileRead> {
    return this.#run(server, { op: 'read', path }, resultSchemas.read);
  }

  async write(server: string, path: string, bytes: Uint8Array, options: WriteOptions): Promise<FileWritten> {
    if (bytes.length > JOB_WRITE_MAX_BYTES) {
      throw new DomainError('too_large', `A file written here may hold at most ${JOB_WRITE_MAX_BYTES} bytes; upload it instead.`);
    }
    const op: FileOp = { op: 'write', path, ...(options.expectSha256 ? { expectSha256: options.expectSha256 } : {}), ...(options.createOnly ? { createOnly: true } : {}) };
    return this.#run(server, op, resultSchemas.write, bytes);
  }

  async remove(server: string, path: string): Promise<FileDone> {
    return this.#run(server, { op: 'delete', path }, resultSchemas.delete);
  }

  async mkdir(server: string, path: string): Promise<FileDone> {
    return this.#run(server, { op: 'mkdir', path }, resultSchemas.mkdir);
  }

  async rename(server: string, path: string, to: string): Promise<FileRenamed> {
    worldPathSegments(to);
    return this.#run(server, { op: 'rename', path, to }, resultSchemas.rename);
  }

  /**
   * A small upload is a write through the Job's environment, so it has the write's ceiling; a
   * bigger one is 413 once that many bytes have come (staging bigger files for a Job is not built).
   */
  async upload(server: string, path: string, chunks: AsyncIterable<Uint8Array>, options: { overwrite: boolean }) {
    worldPathSegments(path);
    const parts: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of chunks) {
      size += chunk.length;
      if (size > JOB_WRITE_MAX_BYTES) throw new DomainError('too_large', `An upload to a world here may hold at most ${JOB_WRITE_MAX_BYTES} bytes.`);
      parts.push(chunk);
    }
    const op: FileOp = { op: 'write', path, ...(options.overwrite ? {} : { createOnly: true }) };
    const written = await this.#run(server, op, resultSchemas.write, Buffer.concat(parts));
    return { path: written.path, status: written.status, size };
  }

  /** Runs one operation's Job to its end, reads its result lines, deletes it, and answers as the local path would. */
  async #run<T>(server: string, op: FileOp, schema: z.ZodType<T>, content?: Uint8Array): Promise<T> {
    worldPathSegments(op.path); // 400 bad_path before any Job; the pod checks again
    const { client, log } = this.options;
    const opId = (this.options.newId ?? randomUUID)();
    const name = filesJobName(server, opId);
    try {
      await client.createJob(fileJobManifest(server, opId, op, content, this.options, await currentVolume(client, server)));
    } catch (err) {
      log.error({ err, server, job: name, op: op.op }, 'the cluster refused a world file job');
      throw unavailable('the cluster refused the job');
    }
    try {
      const deadline = this.options.clock.now().getTime() + (this.options.waitMs ?? FILE_JOB_WAIT_MS);
      const job = await this.#waitForEnd(name, opId, deadline);
      const result = await this.#readResult(job, opId, deadline);
      if (!result.ok) {
        if (CLIENT_CODES.has(result.code)) throw new DomainError(result.code as ErrorCode, result.message);
        log.error({ server, job: name, op: op.op, code: result.code, message: result.message }, 'a world file job failed');
        throw unavailable('the file job failed');
      }
      const parsed = schema.safeParse(result.result);
      if (!parsed.success) {
        log.error({ server, job: name, op: op.op }, 'a world file job reported a result of the wrong shape');
        throw unavailable('the file job reported nonsense');
      }
      return parsed.data;
    } finally {
      await client.deleteJob(name).catch((err: unknown) => log.warn({ err, job: name }, 'a world file job could not be deleted; its TTL removes it'));
    }
  }

  /** Looks at the Job until it ends; a failing API is retried until the wait is over (503, logged). */
  async #waitForEnd(name: string, opId: string, deadline: number): Promise<V1Job> {
    const { client, log } = this.options;
    for (;;) {
      try {
        const job = await client.getJob(name);
        if (!job || job.metadata?.labels?.[FILES_OP_LABEL] !== opId) throw unavailable('the file job was deleted before it ended');
        if (endOf(job)) return job;
      } catch (err) {
        if (err instanceof DomainError) throw err;
        log.warn({ err, job: name }, 'a world file job could not be read; trying again');
      }
      if (this.options.clock.now().getTime() >= deadline) {
        log.warn({ job: name }, 'a world file job did not end in time; it is deleted');
        throw unavailable('the file job did not end in time');
      }
      await pause(this.options.pollMs ?? 500);
    }
  }

  /** The result of the ended Job's pod (its marked lines); the pod's log is read again while the API fails. */
  async #readResult(job: V1Job, opId: string, deadline: number) {
    const { client, log } = this.options;
    const name = job.metadata?.name;
    for (;;) {
      try {
        for (const pod of await client.listPods(`${FILES_OP_LABEL}=${opId}`)) {
          const lines: string[] = [];
          const signal = AbortSignal.timeout(30_000);
          for await (const line of client.containerLog(pod.metadata!.name!, FILES_CONTAINER, { follow: false, signal })) lines.push(line.line);
          const result = resultOf(lines);
          if (result) return result;
        }
        const reason = endOf(job)?.reason;
        log.error({ job: name, reason }, 'a world file job ended without a result line');
        throw unavailable(reason === 'DeadlineExceeded' ? 'the file job passed its deadline' : 'the file job ended without a result');
      } catch (err) {
        if (err instanceof DomainError) throw err;
        log.warn({ err, job: name }, 'an ended world file job\'s log could not be read; trying again');
      }
      if (this.options.clock.now().getTime() >= deadline) throw unavailable('the file job\'s log could not be read');
      await pause(this.options.pollMs ?? 500);
    }
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
