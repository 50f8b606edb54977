/**
 * `felis user create|list`: accounts, made and read where the database is, with its own
 * credentials (the same settings as the service), as `recover-owner` does: an API key never
 * reaches what staff alone may do, and the host's operator needs no sign-in to make the first
 * staff accounts. PostgreSQL: while the service runs. The embedded database: with the service
 * stopped (one process at a time may open it).
 *
 *   felis user create USERNAME [--email ADDRESS] [--role user|admin|owner] [--json]
 *   felis user list [--query TEXT] [--role ROLE] [--json]
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig } from '../../config.js';
import { openDatabase, type DatabaseHandle } from '../../db/client.js';
import { createUserAsOperator, EmailSchema, listUsers, RoleSchema, UsernameSchema } from '../../features/accounts/index.js';
import { systemClock } from '../../lib/clock.js';
import { databaseFailure } from '../../startup-failure.js';
import { UsageError, type Command } from '../command.js';
import { osUser } from '../os-user.js';
import { out, table } from './remote.js';

const DATABASE_NOTE = 'It opens the database itself (DATABASE_URL, DATA_DIR): with PostgreSQL while the service runs, with the embedded database while it is stopped.';

function parse(args: string[], options: ParseArgsConfig['options'], positionals: number) {
  try {
    const parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, ...options } });
    if (parsed.positionals.length !== positionals) throw new UsageError(positionals ? 'name the user: felis user create USERNAME' : `unexpected argument: ${parsed.positionals[0]}`);
    return parsed as { values: Record<string, string | boolean | undefined>; positionals: string[] };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** A zod check's message as a usage mistake, naming the option. */
function checked<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ message: string }> } } }, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`${what}: ${result.error.issues[0]?.message ?? 'not valid'}`);
  return result.data;
}

async function withDatabase<T>(work: (database: DatabaseHandle) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }).catch((err: unknown) => {
    throw databaseFailure(err, config, { command: true });
  });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

export const userCreate: Command = {
  verb: 'user create',
  summary: 'make an account (staff roles too), audited to you',
  usage: [
    'felis user create USERNAME [--email ADDRESS] [--role user|admin|owner] [--json]',
    '',
    '  --email ADDRESS   unverified until its holder types back the code the panel sends',
    '  --role ROLE       user (default), admin (staff) or owner',
    '',
    DATABASE_NOTE,
  ].join('\n'),
  async run(args) {
    const { values, positionals } = parse(args, { email: { type: 'string' }, role: { type: 'string' } }, 1);
    const input = {
      username: checked(UsernameSchema, positionals[0], 'USERNAME'),
      role: checked(RoleSchema, values.role ?? 'user', '--role'),
      ...(values.email === undefined ? {} : { email: checked(EmailSchema, values.email, '--email') }),
    };
    const user = await withDatabase((database) => createUserAsOperator({ database, clock: systemClock }, osUser(), input)).catch((err: unknown) => {
      if ((err as { code?: unknown }).code === 'conflict') throw new Error(`felis: ${input.username} (or that e-mail) is taken`);
      throw err;
    });
    out(values.json ? JSON.stringify(user, null, 2) : `made ${user.role} ${user.username} (${user.id})${input.email ? `; ${input.email} is unverified until its holder signs in with a code` : ''}`);
    return 0;
  },
};

export const userList: Command = {
  verb: 'user list',
  summary: 'the accounts (not deleted), oldest first',
  usage: ['felis user list [--query TEXT] [--role user|admin|owner] [--json]', '', DATABASE_NOTE].join('\n'),
  async run(args) {
    const { values } = parse(args, { query: { type: 'string' }, role: { type: 'string' } }, 0);
    const role = values.role === undefined ? undefined : checked(RoleSchema, values.role, '--role');
    const rows = await withDatabase(async (database) => {
      const all: Awaited<ReturnType<typeof listUsers>>['users'] = [];
      for (let offset = 0; ; offset += 500) {
        const page = await listUsers({ database }, { query: values.query as string | undefined, role, limit: 500, offset });
        all.push(...page.users);
        if (all.length >= page.total || page.users.length === 0) return all;
      }
    });
    if (values.json) out(JSON.stringify(rows, null, 2));
    else if (rows.length === 0) out('No accounts.');
    else out(table(['ID', 'USERNAME', 'ROLE', 'E-MAIL', 'DISABLED'], rows.map((u) => [u.id, u.username, u.role, u.email ?? '', u.disabled ? 'yes' : ''])));
    return 0;
  },
};
