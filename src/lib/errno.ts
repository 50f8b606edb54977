/** Whether a failure is a system error with one of these codes (`ENOENT`, `ENOSPC`, …). */
export function isErrno(err: unknown, ...codes: string[]): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && codes.includes(code);
}
