import { asc, eq } from 'drizzle-orm';
import { ImageNotInRegistryError, parseImageRef, formatImageRef, RegistryUnavailableError, type ImageRef, type RegistryAdapter } from '../../adapters/registry/types.js';
import type { Queryable } from '../../db/client.js';
import { images } from '../../db/schema/images.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { ImageView } from './schema.js';

type ImageRow = typeof images.$inferSelect;

export function toImageView(row: ImageRow): ImageView {
  const view: ImageView = {
    image_ref: row.imageRef,
    source: row.source,
    added_by: row.addedBy,
    enabled: row.enabled,
    added_at: row.addedAt.toISOString(),
  };
  if (row.buildId) view.build_id = row.buildId;
  return view;
}

/** A reference in its stored form, or 400 when it is not an image reference. */
export function canonicalImageRef(value: string): { ref: ImageRef; text: string } {
  const ref = parseImageRef(value.trim());
  if (!ref) throw new DomainError('bad_request', 'image_ref is not an image reference (registry/repository:tag).');
  return { ref, text: formatImageRef(ref) };
}

/** Whether the platform registry holds this image (and its tag must be resolved to a digest). */
export function isPlatformImage(registry: RegistryAdapter, ref: ImageRef): boolean {
  return registry.host !== undefined && ref.registry === registry.host;
}

/** The digest of a platform image, with the registry's failures as the contract's codes. */
export async function resolveDigest(registry: RegistryAdapter, ref: ImageRef): Promise<string> {
  try {
    return await registry.resolve(ref);
  } catch (err) {
    if (err instanceof ImageNotInRegistryError) throw new DomainError('image_not_in_registry', err.message);
    if (err instanceof RegistryUnavailableError) {
      throw new DomainError('registry_unavailable', 'The image registry cannot be asked right now.', { cause: err });
    }
    throw err;
  }
}

export async function listImages(db: Queryable): Promise<ImageView[]> {
  const rows = await db.select().from(images).orderBy(asc(images.addedAt), asc(images.imageRef));
  return rows.map(toImageView);
}

export async function findImage(db: Queryable, imageRef: string): Promise<ImageRow | undefined> {
  const [row] = await db.select().from(images).where(eq(images.imageRef, imageRef));
  return row;
}

/** Adds an image to the whitelist; a platform image must exist in the registry. 409 when listed. */
export async function addImage(
  deps: Pick<Deps, 'database' | 'registry' | 'clock'>,
  input: { imageRef: string; addedBy: string; source?: string },
): Promise<ImageView> {
  const { ref, text } = canonicalImageRef(input.imageRef);
  if (isPlatformImage(deps.registry, ref)) await resolveDigest(deps.registry, ref);
  const [row] = await deps.database.db
    .insert(images)
    .values({ imageRef: text, source: input.source ?? 'manual', addedBy: input.addedBy, enabled: true, addedAt: deps.clock.now() })
    .onConflictDoNothing()
    .returning();
  if (!row) throw new DomainError('conflict', `${text} is already whitelisted.`);
  return toImageView(row);
}

/**
 * Lists the image a build produced (enabled, source `build`), or points an image already listed
 * at that build; inside the transaction that marks the build succeeded.
 */
export async function recordBuiltImage(tx: Queryable, input: { imageRef: string; addedBy: string; buildId: string; at: Date }): Promise<void> {
  await tx
    .insert(images)
    .values({ imageRef: input.imageRef, source: 'build', addedBy: input.addedBy, enabled: true, addedAt: input.at, buildId: input.buildId })
    .onConflictDoUpdate({ target: images.imageRef, set: { buildId: input.buildId } });
}

export async function setImageEnabled(db: Queryable, imageRef: string, enabled: boolean): Promise<ImageView> {
  const { text } = canonicalImageRef(imageRef);
  const [row] = await db.update(images).set({ enabled }).where(eq(images.imageRef, text)).returning();
  if (!row) throw new DomainError('not_found', `${text} is not whitelisted.`);
  return toImageView(row);
}

/**
 * Whether a server may run this image: it, or the same reference without its digest, is an enabled
 * whitelist entry.
 */
export async function isWhitelisted(db: Queryable, ref: ImageRef): Promise<boolean> {
  const candidates = [formatImageRef(ref)];
  if (ref.digest) candidates.push(formatImageRef({ ...ref, digest: undefined }));
  for (const candidate of candidates) {
    const row = await findImage(db, candidate);
    if (row?.enabled) return true;
  }
  return false;
}

/** Whitelists an image on behalf of the platform (idempotent; an admin's disable is kept). */
export async function ensureWhitelisted(db: Queryable, imageRef: string, now: Date): Promise<void> {
  await db
    .insert(images)
    .values({ imageRef, source: 'platform', addedBy: 'system', enabled: true, addedAt: now })
    .onConflictDoNothing();
}

/** Removes an image from the whitelist; 404 when it is not listed. */
export async function removeImage(db: Queryable, imageRef: string): Promise<void> {
  const { text } = canonicalImageRef(imageRef);
  const [row] = await db.delete(images).where(eq(images.imageRef, text)).returning({ imageRef: images.imageRef });
  if (!row) throw new DomainError('not_found', `${text} is not whitelisted.`);
}
