import { KubeConfig } from '@kubernetes/client-node';

/** The API server's coordinates, as the composition root and the tests name them. */
export type { KubeConfig };

/**
 * The API server's coordinates: the pod's service account when running in a cluster, otherwise
 * `KUBECONFIG` (or `~/.kube/config`), as kubectl would choose.
 */
export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (env.KUBERNETES_SERVICE_HOST && !env.KUBECONFIG) kubeConfig.loadFromCluster();
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

/** A KubeConfig for a plain-HTTP API server (the tests' stand-in) with a bearer token. */
export function kubeConfigFor(server: string, token = 'stand-in-token'): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'stand-in', server, skipTLSVerify: true }],
    users: [{ name: 'felis', token }],
    contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'felis', namespace: 'felis' }],
    currentContext: 'stand-in',
  });
  return kubeConfig;
}
