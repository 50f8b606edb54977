import { ImageNotInRegistryError, type ImageRef, type RegistryAdapter } from './types.js';

/**
 * A fixed registry: the embedded default, and a stand-in where no registry runs. With no host it
 * owns no image, so no reference is ever pinned; with one, it answers from its table of
 * `repository:tag` → digest.
 */
export class StaticRegistry implements RegistryAdapter {
  readonly kind = 'static' as const;
  readonly host: string | undefined;
  readonly #digests: Map<string, string>;

  constructor(host?: string, digests: Record<string, string> = {}) {
    this.host = host?.toLowerCase();
    this.#digests = new Map(Object.entries(digests));
  }

  async resolve(ref: ImageRef): Promise<string> {
    if (ref.digest && [...this.#digests.values()].includes(ref.digest)) return ref.digest;
    const digest = this.#digests.get(`${ref.repository}:${ref.tag ?? 'latest'}`);
    if (!digest) throw new ImageNotInRegistryError(`${ref.repository}:${ref.tag ?? 'latest'} is not in the registry`);
    return digest;
  }
}
