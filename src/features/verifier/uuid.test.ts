import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseUuid, sourceNamespace, thirdPartyUuid, URL_NAMESPACE, uuidV3 } from './uuid.js';

/** UUIDv3 written out from RFC 9562 section 5.3, independently of the code under test. */
function referenceV3(namespaceDashed: string, name: string): string {
  const bytes = [...createHash('md5').update(Buffer.concat([Buffer.from(namespaceDashed.replace(/-/g, ''), 'hex'), Buffer.from(name)])).digest()];
  bytes[6] = (bytes[6]! & 0x0f) | 0x30;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}

describe('name-based UUIDs', () => {
  it('matches the RFC 9562 test vector (DNS namespace, www.example.com)', () => {
    expect(uuidV3('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('5df41881-3aed-3515-88a7-2f4a814cf09e');
  });

  it('derives the documented per-source namespace: UUIDv3(URL namespace, "felis:session-source:<name>")', () => {
    // Vectors computed with Python's uuid.uuid3(uuid.NAMESPACE_URL, ...).
    expect(sourceNamespace('elyby')).toBe('02d81739-0822-3a94-9f93-e9c864f4ce51');
    expect(sourceNamespace('backup')).toBe('3c95a15c-fc92-3935-8fa4-2d5707cb46e8');
    expect(sourceNamespace('elyby')).toBe(referenceV3(URL_NAMESPACE, 'felis:session-source:elyby'));
  });

  it('names a third-party player by the lowercase dashed source UUID, whatever its spelling', () => {
    const expected = '72940132-c16d-30c6-b7d9-0f6089ad729f';
    expect(thirdPartyUuid('elyby', '069a79f4-44e9-4726-a5be-fca90e38aaf5')).toBe(expected);
    expect(thirdPartyUuid('elyby', '069A79F444E94726A5BEFCA90E38AAF5')).toBe(expected);
    expect(thirdPartyUuid('elyby', '069a79f4-44e9-4726-a5be-fca90e38aaf5')).toBe(
      referenceV3(referenceV3(URL_NAMESPACE, 'felis:session-source:elyby'), '069a79f4-44e9-4726-a5be-fca90e38aaf5'),
    );
    expect(thirdPartyUuid('backup', '069a79f444e94726a5befca90e38aaf5')).toBe('d5ff6ce8-5094-3a4b-a40b-2ec52e151584');
  });

  it('yields version 3, the nibble the linking feature reads as thirdparty', () => {
    expect(thirdPartyUuid('elyby', '61699b2e-d327-4a01-9f1e-0ea8c3f06bc6')[14]).toBe('3');
  });

  it('refuses what is not a UUID', () => {
    expect(parseUuid('069a79f444e94726a5befca90e38aaf')).toBeUndefined();
    expect(parseUuid('069a79f4-44e9-4726-a5be-fca90e38aaf5x')).toBeUndefined();
    expect(parseUuid('zz9a79f444e94726a5befca90e38aaf5')).toBeUndefined();
    expect(() => thirdPartyUuid('elyby', 'nope')).toThrow(TypeError);
  });
});
