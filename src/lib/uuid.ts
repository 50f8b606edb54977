const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID in its dashed text form: checked before it reaches a uuid column, where it would be a 500. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
