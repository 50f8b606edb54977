import { UsageError, type Command } from './command.js';

/** Runs a command's main: its number is the exit code; an error prints its message alone and exits 1 (2 for a usage mistake). */
export function runCommand(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}

/** The entry file of one command (`node dist/cli/db-backup.js …`): runs it on the process's arguments. */
export function runAlone(command: Command): void {
  runCommand(() => command.run(process.argv.slice(2)));
}
