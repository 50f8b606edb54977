import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { codedIssueOf, refusedAs } from './coded-refusal.js';

describe('a schema naming its own refusal code', () => {
  const Path = z.object({ path: z.string().max(8).refine((p) => !p.includes('\0'), refusedAs('bad_path', 'holds a NUL')) }).strict();

  it('carries the code of the refinement that refused', () => {
    const result = Path.safeParse({ path: 'a\0b' });
    expect(result.success).toBe(false);
    expect(codedIssueOf(result.error!)).toEqual({ code: 'bad_path', message: 'holds a NUL' });
  });

  it('has no code for the generic refusals', () => {
    for (const value of [{ path: 'x'.repeat(9) }, { path: 'ok', extra: 1 }, { path: 3 }]) {
      const result = Path.safeParse(value);
      expect(result.success).toBe(false);
      expect(codedIssueOf(result.error!)).toBeUndefined();
    }
  });
});
