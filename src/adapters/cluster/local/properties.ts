import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * `server.properties` as the game reads it (java.util.Properties): `key=value` lines, `#` and `!`
 * comments, backslash escapes. The service owns a few keys; every other line the operator or the
 * game wrote is kept as it was.
 */

/** Escapes a value so that it stays one line and one value (non-ASCII as `\uXXXX`). */
export function escapeProperty(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '=' || ch === ':' || ch === '#' || ch === '!') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) continue;
    else if (code > 0x7e) {
      for (const unit of String.fromCodePoint(code).split('')) out += `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return out;
}

const keyOf = (line: string): string | undefined => {
  const trimmed = line.trimStart();
  if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith('!')) return undefined;
  const match = /^((?:\\.|[^=:\s\\])+)/.exec(trimmed);
  return match?.[1];
};

/** Writes `values` into the folder's server.properties, keeping the other lines; answers the file's path. */
export async function writeServerProperties(folder: string, values: Record<string, string>): Promise<string> {
  const path = join(folder, 'server.properties');
  let kept: string[] = [];
  try {
    kept = (await readFile(path, 'utf8')).split(/\r?\n/).filter((line) => {
      const key = keyOf(line);
      return key === undefined ? line.trim() !== '' : !(key in values);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const owned = Object.entries(values).map(([key, value]) => `${key}=${escapeProperty(value)}`);
  // 0600: the RCON password is in it.
  await writeFile(path, `${[...kept, ...owned].join('\n')}\n`, { mode: 0o600 });
  return path;
}

/** The one word the game asks of its operator: `eula=true` only when they accepted it. */
export async function writeEula(folder: string): Promise<void> {
  await writeFile(
    join(folder, 'eula.txt'),
    '# The operator accepted the Minecraft EULA (https://aka.ms/MinecraftEULA) by LOCAL_EULA=true.\neula=true\n',
  );
}
