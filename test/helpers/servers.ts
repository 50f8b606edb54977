import { SYSTEM_LABEL, type ServerResource, type ServerSpec } from '../../src/adapters/cluster/types.js';
import type { TestDeps } from './app.js';

let counter = 0;

/** A unique server name (tests in one file share a database). */
export function uniqueServerName(prefix = 's'): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter.toString(36)}${Math.random().toString(36).slice(2, 5)}`;
}

/** Adds a server to the test's simulated cluster, stopped unless told otherwise. */
export function addServer(deps: TestDeps, spec: Partial<ServerSpec> = {}): ServerResource {
  const name = spec.name ?? uniqueServerName();
  return deps.cluster.addServer({
    subdomain: name,
    memory: '2Gi',
    storage: '5Gi',
    cpu: '1',
    labels: {},
    ...spec,
    name,
  });
}

export function addSystemServer(deps: TestDeps, name: 'login' | 'lobby' | 'limbo'): ServerResource {
  return deps.cluster.addServer({ name, subdomain: name, desiredState: 'Running', labels: { [SYSTEM_LABEL]: 'true' } });
}

/** A random dashed player UUID (version 4). */
export function randomMcUuid(): string {
  return crypto.randomUUID();
}

/** Runs a server of the simulated cluster: wanted running, then its start delay passed and the cluster ticked. */
export async function startServer(deps: TestDeps, name: string): Promise<void> {
  await deps.cluster.setDesiredState(name, 'Running');
  deps.clock.advance(deps.cluster.options.startDelayMs);
  deps.cluster.tick();
}
