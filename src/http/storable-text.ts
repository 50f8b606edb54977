import { ApiError } from './errors.js';

/**
 * Whether a string can be stored as text: PostgreSQL refuses NUL in text, and a lone surrogate
 * has no UTF-8 form (issue 20: such input reached the database and answered 500).
 */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Refuses (400 `bad_request`) any string in a request value (path, query, header, JSON body,
 * object keys included) that storage cannot hold, naming where it was found.
 */
export function assertStorableText(target: string, value: unknown, path: Array<string | number> = []): void {
  if (typeof value === 'string') {
    if (!isStorableText(value)) {
      const where = path.length ? ` ${path.join('.')}` : '';
      throw new ApiError('bad_request', `${target}${where}: text holds a NUL or a lone surrogate, which cannot be stored.`);
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) assertStorableText(target, value[i], [...path, i]);
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      assertStorableText(target, key, path);
      assertStorableText(target, (value as Record<string, unknown>)[key], [...path, key]);
    }
  }
}
