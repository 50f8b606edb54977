/**
 * The sha-256 of a `Content-Digest` header (RFC 9530: `sha-256=:<base64>:`, possibly beside other
 * algorithms), or undefined when the header names no well-formed sha-256.
 */
export function sha256OfContentDigest(header: string | undefined): Buffer | undefined {
  if (!header || header.length > 1024) return undefined;
  for (const member of header.split(',')) {
    const match = /^\s*sha-256\s*=\s*:([A-Za-z0-9+/]{43}=):\s*$/.exec(member);
    if (match) return Buffer.from(match[1]!, 'base64');
  }
  return undefined;
}
