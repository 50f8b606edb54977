import { describe, expect, it } from 'vitest';
import { StaticRegistry } from './static.js';
import { ImageNotInRegistryError } from './types.js';

describe('static registry', () => {
  it('owns no image without a host, and answers from its table with one', async () => {
    expect(new StaticRegistry().host).toBeUndefined();
    const digest = `sha256:${'b'.repeat(64)}`;
    const registry = new StaticRegistry('Registry.Felis.Test', { 'mc/paper:1.21': digest });
    expect(registry.host).toBe('registry.felis.test');
    expect(await registry.resolve({ registry: 'registry.felis.test', repository: 'mc/paper', tag: '1.21' })).toBe(digest);
    expect(await registry.resolve({ repository: 'mc/paper', digest })).toBe(digest);
    await expect(registry.resolve({ repository: 'mc/paper', tag: '1.20' })).rejects.toBeInstanceOf(ImageNotInRegistryError);
  });
});
