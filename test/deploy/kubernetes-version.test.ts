import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiextensionsV1Api, CustomObjectsApi, KubernetesObjectApi, PatchStrategy, VersionApi, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { realApiServer, useApiNamespace } from '../helpers/kube-api.js';

const DEPLOY = join(import.meta.dirname, '../../deploy/base');
const OVERLAYS = join(import.meta.dirname, '../../deploy/overlays');
const KUBECTL = '/usr/bin/kubectl';
const OPERATORS = join(import.meta.dirname, '../../docs/operators.md');

/**
 * The first Kubernetes minor version (1.x) that serves each apiVersion/kind the base manifests
 * use, from the Kubernetes API deprecation guide and release notes: the minimum version of
 * deploy/ is the highest of these. A kind not listed here fails the test, so a new one is looked up.
 */
const SERVED_SINCE: Record<string, number> = {
  'v1/Namespace': 0,
  'v1/ConfigMap': 0,
  'v1/Service': 0,
  'v1/ServiceAccount': 0,
  'v1/Secret': 0,
  'v1/PersistentVolumeClaim': 0,
  'apps/v1/Deployment': 9,
  'rbac.authorization.k8s.io/v1/Role': 8,
  'rbac.authorization.k8s.io/v1/RoleBinding': 8,
  'rbac.authorization.k8s.io/v1/ClusterRole': 8,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 8,
  'networking.k8s.io/v1/NetworkPolicy': 7,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': 16,
  'policy/v1/PodDisruptionBudget': 21,
  'batch/v1/CronJob': 21,
};

/**
 * The same kinds at the version an older API server serves them, for the test API server only
 * (kube-apiserver 1.20, the newest Debian's sources and Go build; see docs/notes/issue-40-controller.md):
 * their specs, as deploy/ writes them, are the same in both versions. deploy/ itself stays on the
 * current versions, since the beta ones are gone from 1.25 on.
 */
const BETA_OF: Record<string, { apiVersion: string; since: number; fieldsOnlyInV1: string[] }> = {
  'policy/v1/PodDisruptionBudget': { apiVersion: 'policy/v1beta1', since: 21, fieldsOnlyInV1: ['unhealthyPodEvictionPolicy'] },
  'batch/v1/CronJob': { apiVersion: 'batch/v1beta1', since: 21, fieldsOnlyInV1: ['timeZone'] },
};

/**
 * The Prometheus operator's kinds the monitoring overlay uses, as stand-in CRDs that take any
 * spec (the operator's own CRDs are not in any registry this project reaches): the test shows the
 * overlay's objects are accepted where those kinds are served, not that the operator's schema
 * accepts them (test/deploy/monitoring.test.ts checks their fields).
 */
const OPERATOR_KINDS = [
  { kind: 'ServiceMonitor', plural: 'servicemonitors' },
  { kind: 'PrometheusRule', plural: 'prometheusrules' },
];

/** What the service itself asks of the API server beyond the manifests (its own writes and reads). */
const SERVICE_NEEDS: Record<string, number> = {
  // The lifecycle controller's leadership (src/adapters/cluster/kubernetes/lease.ts).
  'coordination.k8s.io/v1/Lease': 14,
  // Server-side apply of the workloads, on by default (beta) since 1.18.
  'server-side apply': 18,
};

const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);

type Doc = KubernetesObject & { metadata: { name: string; namespace?: string } };

/** The documents of deploy/base, which every overlay applies: the base kustomization's resources. */
function baseDocuments(): Array<{ file: string; doc: Doc }> {
  const kustomization = parseAllDocuments(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as { resources: string[] };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(DEPLOY, file), 'utf8'))
      .map((d) => d.toJS() as Doc | null)
      .filter((doc): doc is Doc => Boolean(doc?.kind))
      .map((doc) => ({ file, doc })),
  );
}

const keyOf = (doc: Doc) => `${doc.apiVersion}/${doc.kind}`;

/** The minimum version docs/operators.md states, as `Kubernetes **1.N** or newer`. */
function documentedMinimum(): number {
  const match = /Kubernetes \*\*1\.(\d+)\*\* or newer/.exec(readFileSync(OPERATORS, 'utf8'));
  expect(match, 'docs/operators.md names the minimum Kubernetes version').not.toBeNull();
  return Number(match![1]);
}

describe('the minimum Kubernetes version', () => {
  it('is the one docs/operators.md states: the highest first-served version of what deploy/ and the service use', () => {
    const needed = baseDocuments().map(({ doc }) => {
      expect(SERVED_SINCE, `${keyOf(doc)} is looked up in SERVED_SINCE`).toHaveProperty([keyOf(doc)]);
      return SERVED_SINCE[keyOf(doc)]!;
    });
    expect(documentedMinimum()).toBe(Math.max(...needed, ...Object.values(SERVICE_NEEDS)));
  });

  describe.skipIf(!realApiServer())('on the run\'s real API server', () => {
    const api = useApiNamespace('felis-version');
    const overlayNamespaces = { trial: useApiNamespace('felis-ov-trial'), production: useApiNamespace('felis-ov-prod'), monitoring: useApiNamespace('felis-ov-mon') };

    it.runIf(existsSync(KUBECTL)).each(['trial', 'production', 'monitoring'] as const)(
      'applies the %s overlay as `kubectl kustomize` renders it, with only what the server is too old for converted to the version it serves',
      async (overlay) => {
        const { kubeConfig, namespace } = overlayNamespaces[overlay]();
        const minor = Number.parseInt((await kubeConfig.makeApiClient(VersionApi).getCode()).minor, 10);
        const rendered = parseAllDocuments(execFileSync(KUBECTL, ['kustomize', join(OVERLAYS, overlay)], { encoding: 'utf8' }))
          .map((d) => d.toJS() as Doc | null)
          .filter((doc): doc is Doc => Boolean(doc?.kind));
        const converted: string[] = [];
        const documents = rendered.map((doc) => {
          const beta = BETA_OF[keyOf(doc)];
          if (!beta || minor >= beta.since) return doc;
          // Only a spec both versions read is converted: a field v1 alone has fails the test.
          for (const field of beta.fieldsOnlyInV1) expect((doc as { spec?: Record<string, unknown> }).spec?.[field], `${keyOf(doc)} ${field}`).toBeUndefined();
          converted.push(keyOf(doc));
          return { ...doc, apiVersion: beta.apiVersion };
        });
        // Nothing else is converted: every kind of the overlay is served by this server as rendered,
        // except those SERVED_SINCE says are newer than it.
        const tooNew = rendered.map(keyOf).filter((key) => (SERVED_SINCE[key] ?? 0) > minor);
        expect(converted.sort()).toEqual(tooNew.sort());

        const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
        if (documents.some((doc) => doc.apiVersion === 'monitoring.coreos.com/v1')) {
          for (const { kind, plural } of OPERATOR_KINDS) {
            await extensions
              .createCustomResourceDefinition({
                body: {
                  metadata: { name: `${plural}.monitoring.coreos.com` },
                  spec: {
                    group: 'monitoring.coreos.com',
                    scope: 'Namespaced',
                    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
                    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } }],
                  },
                },
              })
              .catch((err: unknown) => ((err as { code?: number }).code === 409 ? undefined : Promise.reject(err)));
            await vi.waitFor(() => kubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: 'monitoring.coreos.com', version: 'v1', namespace, plural }), { timeout: 20_000, interval: 200 });
          }
        }

        // Into a namespace of the test's own: the namespaced objects applied for real (server-side
        // apply, as `kubectl apply --server-side` does); the cluster-wide ones (the Namespace, the
        // CRD, the ClusterRole and its binding, shared by every test on this server) as a dry run.
        const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
        const failures: string[] = [];
        for (const doc of documents) {
          const body = structuredClone(doc) as Doc & { subjects?: Array<{ kind: string; namespace?: string }> };
          const clusterScoped = CLUSTER_SCOPED.has(doc.kind!);
          if (!clusterScoped) body.metadata.namespace = namespace;
          if (doc.kind === 'RoleBinding') for (const subject of body.subjects ?? []) if (subject.namespace) subject.namespace = namespace;
          try {
            await objects.patch(body, undefined, clusterScoped ? 'All' : undefined, 'felis-overlay-test', true, PatchStrategy.ServerSideApply);
          } catch (err) {
            failures.push(`${keyOf(doc)} ${doc.metadata.name}: ${(err as { code?: number }).code} ${String((err as { body?: unknown }).body ?? err).slice(0, 300)}`);
          }
        }
        expect(failures).toEqual([]);
        // Every namespaced object is there, as applied.
        for (const doc of documents.filter((d) => !CLUSTER_SCOPED.has(d.kind!))) {
          const read = await objects.read({ apiVersion: doc.apiVersion, kind: doc.kind, metadata: { name: doc.metadata.name, namespace } });
          expect(read.metadata, `${keyOf(doc)} ${doc.metadata.name}`).toMatchObject({ name: doc.metadata.name, namespace, uid: expect.any(String) });
        }
      },
      60_000,
    );

    it('applies every document of deploy/ (server-side apply, dry run) except those that need a newer Kubernetes than it is', async () => {
      const { kubeConfig, namespace } = api();
      const info = await kubeConfig.makeApiClient(VersionApi).getCode();
      const minor = Number.parseInt(info.minor, 10);
      const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
      const refused: string[] = [];
      const failures: string[] = [];
      for (const { file, doc } of baseDocuments()) {
        const body = structuredClone(doc);
        if (!CLUSTER_SCOPED.has(doc.kind!)) body.metadata.namespace = namespace;
        try {
          await objects.patch(body, undefined, 'All', 'felis-version-test', true, PatchStrategy.ServerSideApply);
        } catch (err) {
          const code = (err as { code?: number }).code;
          // 404, or the client's discovery of the server finds no such kind: the server does not serve it.
          if (code === 404 || /Unrecognized API version and kind/.test(String(err))) refused.push(keyOf(doc));
          else failures.push(`${file} ${keyOf(doc)} ${doc.metadata.name}: ${code} ${String((err as { body?: unknown }).body ?? err).slice(0, 300)}`);
        }
      }
      expect(failures).toEqual([]);
      const tooNew = [...new Set(baseDocuments().map(({ doc }) => keyOf(doc)).filter((key) => SERVED_SINCE[key]! > minor))];
      expect(refused.sort()).toEqual(baseDocuments().map(({ doc }) => keyOf(doc)).filter((key) => tooNew.includes(key)).sort());
      // So: deploy/ applies whole from the documented minimum on, and this server is below it exactly when something was refused.
      expect(refused.length > 0).toBe(minor < documentedMinimum());
    });
  });
});
