import { DomainError } from '../lib/errors.js';

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
 * object keys included) that storage cannot hold, naming where it was found. Walked with a stack
 * of its own: a body nested thousands deep must not overflow the call stack (a 500).
 */
export function assertStorableText(target: string, value: unknown): void {
  // Each item knows its parent and key; the dotted path is only spelled for a refusal (building
  // it for every value cost time and memory in the square of the nesting).
  interface Item {
    value: unknown;
    parent?: Item;
    key?: string | number;
  }
  const pathOf = (item: Item): string => {
    const keys: Array<string | number> = [];
    for (let at: Item | undefined = item; at?.key !== undefined; at = at.parent) keys.push(at.key);
    return keys.reverse().reduce<string>((path, key) => join(path, key), '');
  };
  const pending: Item[] = [{ value }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const current = item.value;
    if (typeof current === 'string') {
      if (!isStorableText(current)) refuse(target, pathOf(item));
    } else if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) pending.push({ value: current[i], parent: item, key: i });
    } else if (typeof current === 'object' && current !== null) {
      for (const key of Object.keys(current)) {
        if (!isStorableText(key)) refuse(target, pathOf(item));
        pending.push({ value: (current as Record<string, unknown>)[key], parent: item, key });
      }
    }
  }
}

const join = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);

function refuse(target: string, path: string): never {
  throw new DomainError('bad_request', `${target}${path ? ` ${path}` : ''}: text holds a NUL or a lone surrogate, which cannot be stored.`);
}
