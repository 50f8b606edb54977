import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
  stop(): void;
}

/** Starts etcd and the API server on free loopback ports (5–9 s to ready). */
export function startEnvtest(): RunningEnvtest {
  const run = mkdtempSync(join(tmpdir(), 'felis-envtest-'));
  execFileSync('bash', [join(TOOLS, 'start.sh'), ENVTEST_BIN, run], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
  return {
    kubeconfig: join(run, 'kubeconfig'),
    stop() {
      spawnSync('bash', [join(TOOLS, 'stop.sh'), run], { stdio: 'ignore', timeout: 30_000 });
      rmSync(run, { recursive: true, force: true });
    },
  };
}
