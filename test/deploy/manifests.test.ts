import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_CRD, toMinecraftServer, type MinecraftServerStatus } from '../../src/adapters/cluster/kubernetes/resource.js';
import { statefulSetFor } from '../../src/adapters/cluster/kubernetes/workloads.js';

const DEPLOY = join(import.meta.dirname, '../../deploy');

/** The kinds the manifests may use, each with the apiVersion the Kubernetes API serves it under. */
const KNOWN: Record<string, string> = {
  Namespace: 'v1',
  ConfigMap: 'v1',
  Service: 'v1',
  ServiceAccount: 'v1',
  Deployment: 'apps/v1',
  PersistentVolumeClaim: 'v1',
  CronJob: 'batch/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  NetworkPolicy: 'networking.k8s.io/v1',
  PodDisruptionBudget: 'policy/v1',
  CustomResourceDefinition: 'apiextensions.k8s.io/v1',
  ServiceMonitor: 'monitoring.coreos.com/v1',
  PrometheusRule: 'monitoring.coreos.com/v1',
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
};

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [key: string]: any };

function load(dir: string): Doc[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((doc) => {
        expect(doc.errors, f).toEqual([]);
        return doc.toJS() as Doc;
      }),
    );
}

const docs = [...load(join(DEPLOY, 'base')), ...load(join(DEPLOY, 'monitoring'))];
const find = (kind: string, name?: string) => docs.find((d) => d.kind === kind && (name === undefined || d.metadata.name === name))!;

/** Every key of `value` is declared by `schema` (the API server would silently prune the rest). */
function undeclared(schema: any, value: unknown, path = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(schema.items, v, `${path}[${i}]`));
  return Object.entries(value).flatMap(([key, v]) => {
    const child = schema.properties?.[key];
    if (!child) return [`${path}.${key}`];
    return undeclared(child, v, `${path}.${key}`);
  });
}

describe('deploy/ manifests', () => {
  it('parse, and every object names a real apiVersion and kind', () => {
    expect(docs.length).toBeGreaterThan(10);
    for (const doc of docs) {
      expect(KNOWN[doc.kind], `${doc.kind} ${doc.metadata?.name}`).toBe(doc.apiVersion);
      if (doc.kind !== 'Kustomization') expect(doc.metadata.name).toMatch(/^[a-z0-9.-]+$/);
    }
  });

  it('run the API with two replicas, probes on /healthz and /readyz, and a disruption budget', () => {
    const deployment = find('Deployment', 'felis-api');
    expect(deployment.spec.replicas).toBe(2);
    const [container] = deployment.spec.template.spec.containers;
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.env).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(deployment.spec.template.metadata.annotations['prometheus.io/scrape']).toBe('true');
    expect(find('PodDisruptionBudget').spec).toMatchObject({ minAvailable: 1, selector: deployment.spec.selector });
  });

  it('require PostgreSQL from the felis-secrets Secret, and size memory for it (the embedded database is refused there)', () => {
    const [container] = find('Deployment', 'felis-api').spec.template.spec.containers;
    expect(container.env).toContainEqual({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'felis-secrets', key: 'DATABASE_URL' } } });
    expect(container.resources).toEqual({ requests: { cpu: '250m', memory: '320Mi' }, limits: { memory: '768Mi' } });
    // The Secrets the pod reads, in the order docs/operators.md creates them.
    expect(container.envFrom.map((e: any) => e.secretRef?.name ?? e.configMapRef?.name)).toEqual(['felis-config', 'felis-secrets', 'felis-backup-store']);
  });

  it('have a Service per face, and keep the internal face inside the cluster', () => {
    expect(find('Service', 'felis-external').spec.ports[0].targetPort).toBe('external');
    expect(find('Service', 'felis-internal').spec.ports[0].targetPort).toBe('internal');
    const policy = find('NetworkPolicy', 'felis-api');
    const internal = policy.spec.ingress.find((rule: any) => rule.ports.some((p: any) => p.port === 8081));
    // Only peers selected by namespace (pods of this cluster); no ipBlock, no open rule.
    expect(internal.from).toEqual([{ namespaceSelector: {} }]);
    const open = policy.spec.ingress.filter((rule: any) => !rule.from);
    expect(open.flatMap((rule: any) => rule.ports.map((p: any) => p.port))).toEqual([8080]);
  });

  it('grant least privilege: no wildcard, secrets only read and created, nodes read-only', () => {
    for (const role of docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole')) {
      for (const rule of role.rules) {
        expect(rule.verbs).not.toContain('*');
        expect(rule.resources).not.toContain('*');
        if (rule.resources.includes('secrets')) expect(rule.verbs.sort()).toEqual(['create', 'get', 'list', 'watch']);
      }
    }
    expect(find('ClusterRole').rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }]);
    // Node control is opt-in, and writes nodes only by patching them (a label, a cordon).
    const nodeControl = load(join(DEPLOY, 'node-control'));
    expect(nodeControl.find((d) => d.kind === 'ClusterRole')!.rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['patch'] }]);
  });

  it('declare in the CRD every field the adapter and the controller write (nothing is pruned)', () => {
    const crd = find('CustomResourceDefinition');
    expect(crd.spec.group).toBe(DEFAULT_CRD.group);
    expect(crd.spec.names.plural).toBe(DEFAULT_CRD.plural);
    const version = crd.spec.versions.find((v: any) => v.name === DEFAULT_CRD.version);
    expect(version.subresources).toEqual({ status: {} });
    const schema = version.schema.openAPIV3Schema;
    const object = toMinecraftServer(
      { name: 'x', subdomain: 'x', displayName: 'X', image: 'i', memory: '4Gi', storage: '10Gi', cpu: '2', cpuRequest: '1', memoryRequest: '2Gi', autostartPolicy: 'public', desiredState: 'Stopped', idleStopSeconds: 60, labels: {} },
      DEFAULT_CRD,
      'felis',
    );
    const status: Required<MinecraftServerStatus> = {
      phase: 'Running',
      ready: true,
      endpoint: { mode: 'service', address: 'x.felis.svc:25565' },
      players: { online: 1, max: 20, unknown: false },
      autoRestarts: 0,
      startGaveUp: false,
      startedAt: 't',
      firstReadyAt: 't',
      emptySince: 't',
      retryAt: 't',
      idleStopSeconds: 60,
      node: 'n',
      conditions: [{ type: 'Ready', status: 'True', reason: 'r', message: 'm', lastTransitionTime: 't', observedGeneration: 1 }],
      observedGeneration: 1,
    };
    const spec = { ...object.spec, heap: '3G', startTimeoutSeconds: 60, readinessTimeoutSeconds: 5, retired: false };
    expect(undeclared(schema, { spec, status })).toEqual([]);
  });

  it('give each game server a StatefulSet the RBAC lets the controller write', () => {
    const set = statefulSetFor(toMinecraftServer({ name: 'x', subdomain: 'x', image: 'i', labels: {} }, DEFAULT_CRD, 'felis'), DEFAULT_CRD);
    expect(set.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).toEqual({ storage: '10Gi' });
    const role = find('Role', 'felis');
    const rule = role.rules.find((r: any) => r.resources.includes('statefulsets'));
    expect(rule.verbs).toEqual(expect.arrayContaining(['create', 'patch', 'delete', 'list']));
  });

  it.runIf(existsSync('/usr/bin/kubectl'))('overlays: a trial on one replica and the embedded database, production with its Ingress, monitoring on top', () => {
    const render = (overlay: string) => parseAllDocuments(execFileSync('kubectl', ['kustomize', join(DEPLOY, 'overlays', overlay)], { encoding: 'utf8' })).map((d) => d.toJS() as Doc);
    const kinds = (built: Doc[]) => built.map((d) => d.kind);
    const deployment = (built: Doc[]) => built.find((d) => d.kind === 'Deployment' && d.metadata.name === 'felis-api') as any;

    const trial = render('trial');
    const api = deployment(trial);
    expect(api.spec.replicas).toBe(1);
    expect(api.spec.strategy).toEqual({ type: 'Recreate' });
    const container = api.spec.template.spec.containers[0];
    expect(container.env).toContainEqual({ name: 'SINGLE_REPLICA', value: 'true' });
    expect(container.env.map((e: any) => e.name)).not.toContain('DATABASE_URL');
    expect(api.spec.template.spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'felis-data' } });
    expect(trial.find((d) => d.kind === 'PersistentVolumeClaim' && d.metadata.name === 'felis-data')).toBeDefined();
    // One replica cannot stay available through a drain, and the nightly pg_dump is PostgreSQL's.
    expect(kinds(trial)).not.toContain('PodDisruptionBudget');
    expect(kinds(trial)).not.toContain('CronJob');

    const production = render('production');
    expect(deployment(production).spec.replicas).toBeGreaterThanOrEqual(2);
    const ingress = production.find((d) => d.kind === 'Ingress') as any;
    expect(ingress.spec.rules.map((r: any) => r.host)).toEqual(['panel.example.com', 'console.example.com']);
    // Only the external face is routed from outside.
    for (const rule of ingress.spec.rules) for (const path of rule.http.paths) expect(path.backend.service.name).toBe('felis-external');

    const monitoring = render('monitoring');
    expect(kinds(monitoring)).toEqual(expect.arrayContaining(['Ingress', 'ServiceMonitor', 'PrometheusRule']));
  });

  it.runIf(existsSync('/usr/bin/kubectl'))('build with kubectl kustomize', () => {
    for (const dir of ['base', 'monitoring', 'overlays/trial', 'overlays/production', 'overlays/monitoring'].map((d) => join(DEPLOY, d))) {
      const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
      const built = parseAllDocuments(out).map((d) => d.toJS() as Doc);
      expect(built.length).toBeGreaterThan(1);
      for (const doc of built) {
        if (!['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition'].includes(doc.kind)) {
          expect(doc.metadata.namespace, `${doc.kind} ${doc.metadata.name}`).toBe('felis');
        }
      }
    }
  });
});
