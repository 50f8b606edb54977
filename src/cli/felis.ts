/**
 * The `felis` command: the operator's verbs in one place.
 *
 *   felis --help | --version | help VERB | VERB [--help] [ARGS…]
 *
 * Verbs that act on the database directly (the service stopped, or beside a PostgreSQL one) read
 * the same settings as the service (DATABASE_URL, DATA_DIR, …). Each verb's module is loaded only
 * when it runs, so `felis --help` starts at once.
 */
import { SERVICE_VERSION } from '../version.js';
import { UsageError, type Command } from './command.js';
import { runCommand } from './run-command.js';

/** Every verb, in the order `felis --help` lists them, loaded when chosen. */
const VERBS: ReadonlyArray<{ verb: string; summary: string; load: () => Promise<Command> }> = [
  { verb: 'setup-token', summary: 'mint a new first-run setup token (before an owner exists)', load: async () => (await import('./commands/setup-token.js')).setupToken },
  { verb: 'recover-owner', summary: 'mint a one-time token that signs in as the existing owner (audited)', load: async () => (await import('./commands/recover-owner.js')).recoverOwner },
  { verb: 'db backup', summary: 'dump the control-plane database into a bundle in DB_BACKUP_DIR', load: async () => (await import('./commands/db-backup.js')).dbBackup },
  { verb: 'db restore', summary: 'restore a database bundle (the service stopped)', load: async () => (await import('./commands/db-restore.js')).dbRestore },
  { verb: 'user create', summary: 'make an account, staff roles too (the database directly)', load: async () => (await import('./commands/user.js')).userCreate },
  { verb: 'user list', summary: 'the accounts (the database directly)', load: async () => (await import('./commands/user.js')).userList },
  { verb: 'server create', summary: 'make a new stopped server (the ops token)', load: async () => (await import('./commands/server.js')).serverCreate },
  { verb: 'server list', summary: 'the servers you own or share (API key)', load: async () => (await import('./commands/server.js')).serverList },
  { verb: 'server status', summary: "one server's phase and players (API key)", load: async () => (await import('./commands/server.js')).serverStatus },
  { verb: 'server wake', summary: 'start a server; --wait follows it until ready (API key)', load: async () => (await import('./commands/server.js')).serverWake },
  { verb: 'server stop', summary: 'stop a server cleanly; --wait follows it (API key)', load: async () => (await import('./commands/server.js')).serverStop },
  { verb: 'backup create', summary: "back up a stopped server's world; --wait follows it (API key)", load: async () => (await import('./commands/backup.js')).backupCreate },
  { verb: 'backup list', summary: 'the backups you may see (API key)', load: async () => (await import('./commands/backup.js')).backupList },
  { verb: 'check-updates', summary: "compare the service's dependencies and image with their registries", load: async () => (await import('./commands/check-updates.js')).checkUpdates },
];

export function helpText(): string {
  const width = Math.max(...VERBS.map((v) => v.verb.length));
  return [
    `felis ${SERVICE_VERSION}: the Felis control plane's command`,
    '',
    'Usage: felis VERB [ARGS…]      felis VERB --help      felis --version',
    '',
    'Verbs:',
    ...VERBS.map((v) => `  ${v.verb.padEnd(width)}  ${v.summary}`),
    '',
    'The database verbs read the same settings as the service (DATABASE_URL, DATA_DIR; .env.example lists them).',
    'The verbs marked (API key) talk to a running service: FELIS_URL (default http://panel.localhost:8080) and',
    'FELIS_API_KEY (made on the panel\'s account page); add --json for scripts.',
  ].join('\n');
}

/** The verb the arguments name (one word, or two as in `db backup`) and the arguments after it. */
function choose(args: string[]): { verb: (typeof VERBS)[number]; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const verb = VERBS.find((v) => v.verb === args.slice(0, words).join(' '));
    if (verb) return { verb, rest: args.slice(words) };
  }
  return undefined;
}

export async function felis(args: string[], out: (text: string) => void = (t) => process.stdout.write(`${t}\n`)): Promise<number> {
  const [first] = args;
  if (first === undefined || first === '--help' || first === '-h' || (first === 'help' && args.length === 1)) {
    out(helpText());
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-v') {
    out(SERVICE_VERSION);
    return 0;
  }
  const asked = first === 'help' ? args.slice(1) : args;
  const chosen = choose(asked);
  if (!chosen) {
    const family = VERBS.filter((v) => v.verb.startsWith(`${asked[0]} `)).map((v) => v.verb.split(' ')[1]);
    if (family.length > 0 && asked.length <= 2) throw new UsageError(`felis ${asked[0]} needs one of: ${family.join(', ')}`);
    throw new UsageError(`felis: no verb "${asked.join(' ')}"; felis --help lists them`);
  }
  const command = await chosen.verb.load();
  if (first === 'help' || chosen.rest.includes('--help') || chosen.rest.includes('-h')) {
    out(`${command.summary}\n\nUsage: ${command.usage}`);
    return 0;
  }
  return command.run(chosen.rest);
}

runCommand(() => felis(process.argv.slice(2)));
