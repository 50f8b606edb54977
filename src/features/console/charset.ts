/**
 * What may reach an RCON command. Access values are spliced into a command, so each is checked
 * against a strict allow-list (anchored; no space, newline, quote, section sign or `=` can pass)
 * before the command is built; the charsets and lengths are the original Felis's.
 */

/** A Java-edition player name: 1 to 16 of letters, digits and underscore. */
export const PLAYER_NAME = /^[A-Za-z0-9_]{1,16}$/;
/** A LuckPerms permission node: letters, digits and `. _ - *`, 1 to 64. */
export const PERMISSION_NODE = /^[A-Za-z0-9_.*-]{1,64}$/;
/** A world (the `world=` context) or a LuckPerms group: letters, digits, `_` and `-`, 1 to 48. */
export const CONTEXT_NAME = /^[A-Za-z0-9_-]{1,48}$/;

/** A console command's most UTF-8 bytes (well inside one RCON request packet). */
export const COMMAND_MAX_BYTES = 1024;

// Control characters (C0 and DEL) would end the line or smuggle a second one.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The command as sent: trimmed, without the one leading slash players type ("/say hi"; RCON takes
 * commands without it, and the original panel sends them as typed); refused when empty,
 * multi-line, or too long.
 */
export function normaliseCommand(raw: string): { command: string } | { problem: string } {
  const command = raw.trim().replace(/^\//, '').trim();
  if (command === '') return { problem: 'command is empty' };
  if (CONTROL.test(command)) return { problem: 'command holds a control character (one line only)' };
  if (Buffer.byteLength(command, 'utf8') > COMMAND_MAX_BYTES) return { problem: `command is longer than ${COMMAND_MAX_BYTES} bytes` };
  return { command };
}
