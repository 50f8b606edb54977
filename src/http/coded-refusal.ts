import type { ZodError } from 'zod';
import type { ErrorCode } from '../lib/errors.js';

/**
 * Refinement options that make a schema's refusal answer with its own code instead of the
 * generic 400 `bad_request`, where the contract names one (a world path holding a NUL is
 * `bad_path`). Use as `.refine(check, refusedAs('bad_path', 'why'))`.
 */
export function refusedAs(code: ErrorCode, message: string) {
  return { message, params: { apiCode: code } };
}

/** The first issue of `error` that carries a code of its own, if any. */
export function codedIssueOf(error: ZodError): { code: ErrorCode; message: string } | undefined {
  for (const issue of error.issues) {
    const code = issue.code === 'custom' ? (issue.params as { apiCode?: ErrorCode } | undefined)?.apiCode : undefined;
    if (code) return { code, message: issue.message };
  }
  return undefined;
}
