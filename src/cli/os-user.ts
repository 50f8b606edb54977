import { userInfo } from 'node:os';

/** Who ran a command, as sudo or the shell tells (attribution for an honest operator, not proof). */
export function osUser(): string {
  const sudo = process.env.SUDO_USER?.trim();
  if (sudo) return sudo;
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
