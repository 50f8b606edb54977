import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/**
 * The arguments of a world Job's pod (`<verb> --folder /data --option value …`), parsed strictly:
 * one verb, no other positional, an unknown option refused, `--folder` an absolute path. What
 * each option must hold is checked by the caller's schema.
 */
export function jobArgs<const O extends ParseArgsOptionsConfig>(argv: string[], options: O) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { folder: { type: 'string' }, ...options } as O & { folder: { type: 'string' } } });
  const [verb, ...rest] = positionals;
  if (rest.length > 0) throw new Error(`unexpected arguments: ${rest.join(' ')}`);
  const folder = (values as { folder?: string }).folder;
  if (!folder?.startsWith('/')) throw new Error('--folder must be an absolute path');
  return { verb, values, folder };
}
