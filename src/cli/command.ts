/** One verb of the `felis` command (src/cli/felis.ts): its words, its help, and what it does. */
export interface Command {
  /** The words that name it: `setup-token`, `db backup`. */
  verb: string;
  /** One line for `felis --help`. */
  summary: string;
  /** What follows the verb, and what each option means, for `felis VERB --help`. */
  usage: string;
  /** Runs it with the arguments after the verb; the number is the exit code. */
  run(args: string[]): Promise<number>;
}

/** A mistake in how a command was called: its message and the usage, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
