import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import { jobNameOf, type BuildJob, type BuildJobs, type BuildPod, type BuildStepState, type FailedBuildJob } from '../build-jobs.js';
import { LABEL_DOMAIN, type PodLogLine, type PodLogOptions } from '../types.js';

/** The label that names a build's Job and pod. */
const BUILD_ID_LABEL = `${LABEL_DOMAIN}/build-id`;

/**
 * A Job that failed before its steps could report (kaniko or Trivy failed, the deadline passed):
 * the build id and the reason, for the watcher of build Jobs to fail the build with.
 */
export function failedBuildOf(job: V1Job): FailedBuildJob | undefined {
  const buildId = job.metadata?.labels?.[BUILD_ID_LABEL];
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  if (!buildId || !failed) return undefined;
  return { buildId, reason: `the build job failed: ${failed.reason ?? 'unknown'}${failed.message ? ` (${failed.message})` : ''}` };
}

export interface BuildJobOptions {
  namespace: string;
  /** The internal face as the job reaches it, e.g. `http://felis-internal.felis.svc:8081`. */
  internalUrl: string;
  /** Secret holding the `build` caller's token under key `token`. */
  tokenSecret: string;
  images: { tools: string; builder: string; scanner: string; pusher: string };
  /** Seconds a build may run before the cluster stops it. */
  deadlineSeconds: number;
  workspaceLimit: string;
}

export const DEFAULT_BUILD_JOB_OPTIONS: Omit<BuildJobOptions, 'internalUrl' | 'namespace'> = {
  tokenSecret: 'felis-build-token',
  images: {
    tools: 'curlimages/curl:8.11.1',
    builder: 'gcr.io/kaniko-project/executor:v1.23.2-debug',
    scanner: 'aquasec/trivy:0.58.1',
    pusher: 'gcr.io/go-containerregistry/crane:v0.20.2',
  },
  deadlineSeconds: 3600,
  workspaceLimit: '20Gi',
};

/** A namespace's build Jobs reach the internal face through its internal Service (deploy/base/services.yaml). */
export function buildJobOptionsFor(namespace: string): BuildJobOptions {
  return { ...DEFAULT_BUILD_JOB_OPTIONS, namespace, internalUrl: `http://felis-internal.${namespace}.svc` };
}

// Every script reads the build's values from its environment and reports over the internal face
// with the `build` caller's token; no value of a build is ever spliced into a script.
const REPORT = `report() { curl -fsS -X POST -H "Authorization: Bearer $BUILD_TOKEN" -H 'Content-Type: application/json' --data "$2" "$API/api/v1/internal/builds/$BUILD_ID/$1"; }`;

const FETCH = [
  'set -eu',
  REPORT,
  'report status \'{"status":"building"}\'',
  'mkdir -p /workspace/context',
  'if [ -n "${CONTEXT_DIGEST:-}" ]; then',
  '  curl -fsS -H "Authorization: Bearer $BUILD_TOKEN" -o /workspace/context.tar.gz "$API/api/v1/internal/builds/$BUILD_ID/context"',
  '  echo "$CONTEXT_DIGEST  /workspace/context.tar.gz" | sha256sum -c -',
  '  tar -xzf /workspace/context.tar.gz -C /workspace/context',
  'fi',
  'if [ -n "${DOCKERFILE:-}" ]; then printf "%s\\n" "$DOCKERFILE" > /workspace/context/Dockerfile; fi',
].join('\n');

const SCAN = [
  'set -eu',
  'trivy image --input /workspace/image.tar --scanners vuln,secret --list-all-pkgs --format json --output /workspace/report.json',
  'trivy convert --format cyclonedx --output /workspace/sbom.json /workspace/report.json',
].join('\n');

const GATE = [
  'set -eu',
  REPORT,
  '{ printf \'{"report":\'; cat /workspace/report.json; printf \',"sbom":\'; cat /workspace/sbom.json; printf \'}\'; } > /workspace/scan.json',
  'curl -fsS -X POST -H "Authorization: Bearer $BUILD_TOKEN" -H "Content-Type: application/json" --data-binary @/workspace/scan.json "$API/api/v1/internal/builds/$BUILD_ID/scan" > /workspace/verdict.json',
  // The gate decides: a blocked image never reaches the push step (the API has failed the build).
  'grep -q \'"blocked":false\' /workspace/verdict.json || { cat /workspace/verdict.json; exit 1; }',
].join('\n');

const PUSH = ['set -eu', 'crane push /workspace/image.tar "$IMAGE_REF"'].join('\n');
const SUCCEED = ['set -eu', REPORT, 'report status \'{"status":"succeeded"}\''].join('\n');

/**
 * The Job of one build: fetch the pinned context (its sha-256 checked), build with kaniko into a
 * tarball (no push), scan it with Trivy (report and CycloneDX SBOM), hand both to the scan gate,
 * and push only when the gate did not block. Steps run in order as init containers.
 */
export function buildJobManifest(job: BuildJob, options: BuildJobOptions): V1Job {
  const name = jobNameOf(job.buildId);
  const env = [
    { name: 'API', value: options.internalUrl },
    { name: 'BUILD_ID', value: job.buildId },
    { name: 'IMAGE_REF', value: job.imageRef },
    { name: 'BUILD_TOKEN', valueFrom: { secretKeyRef: { name: options.tokenSecret, key: 'token' } } },
    ...(job.contextDigest ? [{ name: 'CONTEXT_DIGEST', value: job.contextDigest }] : []),
    ...(job.dockerfile ? [{ name: 'DOCKERFILE', value: job.dockerfile }] : []),
  ];
  const workspace = [{ name: 'workspace', mountPath: '/workspace' }];
  const unprivileged = { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
  const step = (stepName: string, image: string, script: string, securityContext: object = unprivileged) => ({
    name: stepName,
    image,
    command: ['/bin/sh', '-c', script],
    env,
    volumeMounts: workspace,
    securityContext,
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '4Gi' } },
  });
  const builderArgs = [
    '--context=dir:///workspace/context',
    '--dockerfile=/workspace/context/Dockerfile',
    '--no-push',
    '--tar-path=/workspace/image.tar',
    `--destination=${job.imageRef}`,
    ...(job.baseImage ? [`--build-arg=BASE_IMAGE=${job.baseImage}`] : []),
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: options.namespace,
      labels: { 'app.kubernetes.io/part-of': 'felis', [BUILD_ID_LABEL]: job.buildId },
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: options.deadlineSeconds,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels: { [BUILD_ID_LABEL]: job.buildId } },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          volumes: [{ name: 'workspace', emptyDir: { sizeLimit: options.workspaceLimit } }],
          initContainers: [
            step('fetch', options.images.tools, FETCH),
            // kaniko unpacks the base image as root inside its own container: the one step that needs it.
            {
              name: 'build',
              image: options.images.builder,
              args: builderArgs,
              env,
              volumeMounts: workspace,
              securityContext: { allowPrivilegeEscalation: false },
              resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { memory: '8Gi' } },
            },
            step('scan', options.images.scanner, SCAN),
            step('gate', options.images.tools, GATE),
            step('push', options.images.pusher, PUSH),
          ],
          containers: [step('report', options.images.tools, SUCCEED)],
        },
      },
    },
  };
}

/** What build Jobs use of the Kubernetes adapter (KubernetesCluster): the Jobs and pods of its namespace. */
export interface BuildJobClient {
  createJob(body: V1Job): Promise<V1Job>;
  deleteJob(name: string): Promise<void>;
  watchJobs(labelSelector: string, onEvent: (type: string, job: V1Job) => void): { stop(): void };
  listPods(labelSelector: string): Promise<V1Pod[]>;
  containerLog(pod: string, container: string, options: PodLogOptions): AsyncIterable<PodLogLine>;
}

/** Builds as Jobs of the namespace; each Job reports back over the internal face (BuildJobOptions). */
export class KubernetesBuildJobs implements BuildJobs {
  readonly kind = 'kubernetes';

  constructor(
    private readonly client: BuildJobClient,
    private readonly options: BuildJobOptions,
  ) {}

  async start(job: BuildJob): Promise<{ jobName: string }> {
    const created = await this.client.createJob(buildJobManifest(job, this.options));
    return { jobName: created.metadata?.name ?? jobNameOf(job.buildId) };
  }

  async cancel(jobName: string): Promise<void> {
    await this.client.deleteJob(jobName);
  }

  watchFailed(onFailed: (failed: FailedBuildJob) => void): { stop(): void } {
    return this.client.watchJobs(BUILD_ID_LABEL, (_type, job) => {
      const failed = failedBuildOf(job);
      if (failed) onFailed(failed);
    });
  }

  async newestPod(buildId: string): Promise<BuildPod | undefined> {
    const pod = newest(await this.client.listPods(`${BUILD_ID_LABEL}=${buildId}`));
    if (!pod?.metadata?.name) return undefined;
    const states = stepStates(pod);
    return { name: pod.metadata.name, steps: stepNames(pod).map((name) => ({ name, state: states.get(name) ?? 'waiting' })) };
  }

  stepLog(pod: string, step: string, options: PodLogOptions): AsyncIterable<PodLogLine> {
    return this.client.containerLog(pod, step, options);
  }
}

function newest(pods: V1Pod[]): V1Pod | undefined {
  const created = (pod: V1Pod) => new Date(pod.metadata?.creationTimestamp ?? 0).getTime();
  return [...pods].sort((a, b) => created(b) - created(a))[0];
}

/** A build's steps are its pod's init containers, then its containers, in the order they run. */
function stepNames(pod: V1Pod): string[] {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
}

function stepStates(pod: V1Pod): Map<string, BuildStepState> {
  const statuses: V1ContainerStatus[] = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return new Map(
    statuses.map((s) => [s.name, s.state?.terminated ? 'terminated' : s.state?.running ? 'running' : 'waiting'] as const),
  );
}
