import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubernetesObjectApi, PatchStrategy, VersionApi, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { realApiServer, useApiNamespace } from '../helpers/kube-api.js';

const DEPLOY = join(import.meta.dirname, '../../deploy/base');
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
