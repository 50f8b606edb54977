import { SYSTEM_LABEL } from '../../src/adapters/cluster/types.js';
let counter = 0;
/** A unique server name (tests in one file share a database). */
export function uniqueServerName(prefix = 's') {
    counter += 1;
    return `${prefix}${Date.now().toString(36)}${counter.toString(36)}${Math.random().toString(36).slice(2, 5)}`;
}
/** Adds a server to the test's simulated cluster, stopped unless told otherwise. */
export function addServer(deps, spec = {}) {
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
export function addSystemServer(deps, name) {
    return deps.cluster.addServer({ name, subdomain: name, desiredState: 'Running', labels: { [SYSTEM_LABEL]: 'true' } });
}
/** A random dashed player UUID (version 4). */
export function randomMcUuid() {
    return crypto.randomUUID();
}
