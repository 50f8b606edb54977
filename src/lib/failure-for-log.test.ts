import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { failureForLog } from './failure-for-log.js';

describe('failureForLog', () => {
  it("keeps a failed statement and its driver's error, never the bound parameters", () => {
    const cause = Object.assign(new Error('relation "x" does not exist'), { code: '42P01' });
    const failed = new DrizzleQueryError('select * from "sessions" where "token_hash" = $1', ['a1b2c3secrethash'], cause);
    const logged = failureForLog(failed) as Error & { code?: string };
    const text = JSON.stringify({ message: logged.message, stack: logged.stack, cause: String(logged.cause), code: logged.code });
    expect(text).not.toContain('a1b2c3secrethash');
    expect(logged.message).toContain('select * from "sessions"');
    expect(logged.cause).toBe(cause);
    expect(logged.code).toBe('42P01');
    expect(Object.values(logged)).not.toContainEqual(['a1b2c3secrethash']);
  });

  it('leaves any other error as it is', () => {
    const err = new Error('boom');
    expect(failureForLog(err)).toBe(err);
  });
});
