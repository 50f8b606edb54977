import { createHash } from 'node:crypto';

const UNDASHED = /^[0-9a-f]{32}$/;
const DASHED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** RFC 9562 namespace for URLs; the parent of every session-source namespace. */
export const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

/**
 * A UUID as session servers send it (32 hex digits, or dashed; any case) in the lowercase dashed
 * form, or undefined when it is not one.
 */
export function parseUuid(value: string): string | undefined {
  const lower = value.toLowerCase();
  const hex = UNDASHED.test(lower) ? lower : DASHED.test(lower) ? lower.replaceAll('-', '') : undefined;
  if (hex === undefined) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function undash(uuid: string): string {
  return uuid.replaceAll('-', '');
}

/** Name-based UUID version 3 (RFC 9562 section 5.3): MD5 of the namespace bytes and the UTF-8 name. */
export function uuidV3(namespace: string, name: string): string {
  const hash = createHash('md5')
    .update(Buffer.from(undash(namespace), 'hex'))
    .update(name, 'utf8')
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x30;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return parseUuid(hash.toString('hex'))!;
}

/** The namespace of one session source: UUIDv3(URL namespace, `felis:session-source:<name>`). */
export function sourceNamespace(sourceName: string): string {
  return uuidV3(URL_NAMESPACE, `felis:session-source:${sourceName}`);
}

/**
 * The canonical UUID of a player validated by a non-primary session source: UUIDv3 in that
 * source's namespace, named by the source's UUID in lowercase dashed form (so an undashed and a
 * dashed spelling of one id give one player). Returned lowercase dashed. It is version 3, which the
 * linking feature reads as `thirdparty`; it must derive the id with this very function. Renaming a
 * source changes every UUID it yields: a source's name is part of its players' identity.
 */
export function thirdPartyUuid(sourceName: string, sourceUuid: string): string {
  const parsed = parseUuid(sourceUuid);
  if (parsed === undefined) throw new TypeError(`not a UUID: ${sourceUuid}`);
  return uuidV3(sourceNamespace(sourceName), parsed);
}
