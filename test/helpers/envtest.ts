import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real Kubernetes API server (kube-apiserver and etcd, no kubelet) for the tests that talk to
 * one: tools/envtest builds the binaries once per machine (`npm run envtest:build`, about 13
 * minutes) into ENVTEST_BIN, by default /var/cache/felis-envtest/bin, outside the clone.
 */

export const ENVTEST_BIN = process.env.ENVTEST_BIN ?? '/var/cache/felis-envtest/bin';
// Beside the sources, or (a compiled bench in dist-bench/) from the checkout's root.
const BESIDE = fileURLToPath(new URL('../../tools/envtest/', import.meta.url));
const TOOLS = existsSync(BESIDE) ? BESIDE : join(process.cwd(), 'tools', 'envtest');

/** Whether the binaries are there (the suites that need them skip, said once by the global setup, when not). */
export function envtestAvailable(): boolean {
  return existsSync(join(ENVTEST_BIN, 'kube-apiserver')) && existsSync(join(ENVTEST_BIN, 'etcd'));
}

export interface RunningEnvtest {
  /** A kubeconfig with an admin (`system:masters`) token for the server. */
  kubeconfig: string;
  /** etcd's client URL (its v3 JSON gateway compacts: compactEtcd). */
  etcdUrl: string;
  stop(): void;
}

/**
 * Starts etcd and the API server on free loopback ports (5–9 s to ready). `apiserverArgs` are
 * extra kube-apiserver flags, for the one test file that needs a server of its own.
 */
export function startEnvtest(options: { apiserverArgs?: string[] } = {}): RunningEnvtest {
  const run = mkdtempSync(join(tmpdir(), 'felis-envtest-'));
  execFileSync('bash', [join(TOOLS, 'start.sh'), ENVTEST_BIN, run], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 120_000,
    env: { ...process.env, APISERVER_ARGS: (options.apiserverArgs ?? []).join(' ') },
  });
  return {
    kubeconfig: join(run, 'kubeconfig'),
    etcdUrl: readFileSync(join(run, 'etcd-url'), 'utf8').trim(),
    stop() {
      spawnSync('bash', [join(TOOLS, 'stop.sh'), run], { stdio: 'ignore', timeout: 30_000 });
      rmSync(run, { recursive: true, force: true });
    },
  };
}

/**
 * Compacts etcd past its current revision (through its v3 JSON gateway, no etcdctl needed): every
 * older resourceVersion is gone, so a watch resumed from one ends with 410 Gone, as after the API
 * server's own periodic compaction in a cluster. Answers the revision compacted at.
 */
export async function compactEtcd(etcdUrl: string): Promise<number> {
  // A write of its own first, so the revision compacted at is past the last one the API server
  // wrote: a watch from that last version (which starts at the next revision) is refused too.
  const put = await fetch(`${etcdUrl}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('/felis-test/compaction').toString('base64'), value: Buffer.from(String(Date.now())).toString('base64') }),
  });
  const { header } = (await put.json()) as { header: { revision: string } };
  const revision = Number(header.revision);
  const compacted = await fetch(`${etcdUrl}/v3/kv/compaction`, { method: 'POST', body: JSON.stringify({ revision: String(revision), physical: true }) });
  if (!compacted.ok) throw new Error(`etcd compaction: ${compacted.status} ${await compacted.text()}`);
  return revision;
}
