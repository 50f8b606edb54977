/**
 * The cluster adapter: where server resources and their pods live. The servers feature widens this
 * interface; the foundation needs only to know whether the cluster answers.
 */
export interface ClusterAdapter {
  readonly kind: 'simulated' | 'kubernetes';
  /** Resolves when the cluster answers; rejects with the reason otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
