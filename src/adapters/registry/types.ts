/** Where images live. The platform registry's tags are resolved to digests so a server is pinned. */
export interface RegistryAdapter {
  readonly kind: 'oci' | 'static';
  /** The platform registry's host (`registry.example:5000`), or undefined when there is none. */
  readonly host: string | undefined;
  /** The digest (`sha256:<hex>`) the reference names now; ImageNotInRegistryError, RegistryUnavailableError. */
  resolve(ref: ImageRef): Promise<string>;
}

export class ImageNotInRegistryError extends Error {
  override name = 'ImageNotInRegistryError';
}

export class RegistryUnavailableError extends Error {
  override name = 'RegistryUnavailableError';
}

export interface ImageRef {
  /** Registry host with port, when the reference names one. */
  registry?: string;
  repository: string;
  tag?: string;
  digest?: string;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const REFERENCE = new RegExp(
  `^(?:(?<registry>(?:[a-zA-Z0-9-]+(?:\\.[a-zA-Z0-9-]+)*)(?::[0-9]{1,5})?)/)?` +
    `(?<repository>${COMPONENT}(?:/${COMPONENT})*)` +
    `(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?` +
    `(?:@(?<digest>sha256:[a-f0-9]{64}))?$`,
);

/**
 * Parses an image reference (the distribution reference grammar). The first component is a
 * registry only when it looks like a host (a dot, a port or `localhost`), as Docker decides.
 */
export function parseImageRef(value: string): ImageRef | undefined {
  if (value.length > 512) return undefined;
  const match = REFERENCE.exec(value);
  if (!match?.groups) return undefined;
  let { registry, repository } = match.groups as { registry?: string; repository: string };
  if (registry && !/[.:]/.test(registry) && registry !== 'localhost') {
    if (registry !== registry.toLowerCase()) return undefined;
    repository = `${registry}/${repository}`;
    registry = undefined;
  }
  const ref: ImageRef = { repository };
  if (registry) ref.registry = registry.toLowerCase();
  if (match.groups.tag) ref.tag = match.groups.tag;
  if (match.groups.digest) ref.digest = match.groups.digest;
  return ref;
}

export function formatImageRef(ref: ImageRef): string {
  let out = ref.registry ? `${ref.registry}/${ref.repository}` : ref.repository;
  if (ref.tag) out += `:${ref.tag}`;
  if (ref.digest) out += `@${ref.digest}`;
  return out;
}
