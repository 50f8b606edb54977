/** Orchestrator quantities (`500m`, `2`, `4Gi`, `512Mi`, `10G`) as the integers quotas count in. */

const MEMORY_UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

const QUANTITY = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

export function isQuantity(value: string): boolean {
  return QUANTITY.test(value);
}

/** Bytes of a memory or storage quantity, or undefined when it is not one. */
export function quantityBytes(value: string): number | undefined {
  const match = QUANTITY.exec(value);
  if (!match || match[2] === 'm') return undefined;
  return Number(match[1]) * MEMORY_UNITS[match[2] ?? '']!;
}

/** Millicores of a CPU quantity (`500m`, `2`, `1.5`), or undefined. */
export function cpuMilli(value: string): number | undefined {
  const match = QUANTITY.exec(value);
  if (!match) return undefined;
  if (match[2] === 'm') return Math.ceil(Number(match[1]));
  if (match[2] !== undefined) return undefined;
  return Math.ceil(Number(match[1]) * 1000);
}

export function memoryMb(value: string): number | undefined {
  const bytes = quantityBytes(value);
  return bytes === undefined ? undefined : Math.ceil(bytes / 1024 ** 2);
}

export function storageGb(value: string): number | undefined {
  const bytes = quantityBytes(value);
  return bytes === undefined ? undefined : Math.ceil(bytes / 1024 ** 3);
}

/**
 * The JVM heap for a pod memory limit: three quarters of it, leaving room for metaspace, thread
 * stacks and native buffers, which live outside the heap.
 */
export function javaMemoryFor(memory: string): string | undefined {
  const mb = memoryMb(memory);
  if (mb === undefined || mb < 4) return undefined;
  return `${Math.floor((mb * 3) / 4)}M`;
}
