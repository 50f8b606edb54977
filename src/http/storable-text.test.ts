import { describe, expect, it } from 'vitest';
import { DomainError } from '../lib/errors.js';
import { assertStorableText, isStorableText } from './storable-text.js';

describe('text storage can hold', () => {
  it('refuses NUL and lone surrogates, keeps paired ones', () => {
    expect(isStorableText('plain ü 😀')).toBe(true);
    for (const bad of ['a\u0000b', 'a\ud800', '\udc00b', 'x\ud83d']) expect(isStorableText(bad), JSON.stringify(bad)).toBe(false);
  });

  it('walks values and keys, names where the text was, and survives deep nesting', () => {
    expect(() => assertStorableText('json', { a: [1, 'ok', { b: 'x\u0000' }] })).toThrow(/^json a\.2\.b: text holds a NUL/);
    expect(() => assertStorableText('query', { 'k\ud800': 'v' })).toThrow(DomainError);
    const deep = JSON.parse('['.repeat(20_000) + '"\\u0000"' + ']'.repeat(20_000)) as unknown;
    expect(() => assertStorableText('json', deep)).toThrow(DomainError);
    expect(() => assertStorableText('param', { name: 'lobby' })).not.toThrow();
  });
});
