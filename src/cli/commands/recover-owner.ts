/**
 * Lost-owner recovery, run where the database is (the same DATABASE_URL / DATA_DIR as the
 * service): mints a one-time token that signs in as the existing owner, audited, deleting nothing
 * (src/features/auth/owner-recovery.ts has the rules). With no owner yet it mints the first-run
 * token. PostgreSQL: while the service runs. The embedded database: with the service stopped (one
 * process at a time may open it).
 *
 *   felis recover-owner [--username NAME]        (npm run recover-owner [-- --username NAME])
 *   kubectl -n felis exec deploy/felis-api -- node dist/cli/recover-owner.js
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/client.js';
import { consoleCurl, leaveSetupCommands, mintOwnerRecoveryToken, redeemCommand } from '../../features/auth/index.js';
import { systemClock } from '../../lib/clock.js';
import { cryptoRandom } from '../../lib/random.js';
import { databaseFailure } from '../../startup-failure.js';
import type { Command } from '../command.js';
import { osUser } from '../os-user.js';

async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { username: { type: 'string' } } });
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }).catch((err: unknown) => {
    throw databaseFailure(err, config, { command: true });
  });
  try {
    const result = await mintOwnerRecoveryToken(
      { clock: systemClock, random: cryptoRandom, database },
      { username: values.username, actor: `cli:${osUser()}`, ranOn: hostname() },
    );
    const out = (text: string) => process.stdout.write(`${text}\n`);
    switch (result.kind) {
      case 'choose':
        process.stderr.write(`There are several owners (${result.owners.join(', ')}): name one with --username.\n`);
        return 2;
      case 'unknown_owner':
        process.stderr.write(`No owner is called ${values.username}; the owners are ${result.owners.join(', ')}.\n`);
        return 2;
      case 'disabled':
        process.stderr.write(`The owner ${result.owner} is disabled by another owner; recover one of ${result.owners.join(', ')} instead.\n`);
        return 2;
      case 'first_run':
        out(`No owner yet: minted the first-run setup token (valid until ${result.expiresAt.toISOString()}, single use):\n${result.token}`);
        break;
      case 'recovery':
        out(`Owner recovery token for "${result.owner.username}" (valid until ${result.expiresAt.toISOString()}, single use, recorded in the audit log):\n${result.token}`);
        out('Redeeming it signs in as that owner, ends its other sessions and asks for a new way in (a verified e-mail or a passkey).');
        break;
    }
    const redeem = redeemCommand(config, result.token);
    if (!redeem) {
      out('Redeem it with POST /api/v1/auth/setup/redeem {"token"} on the console host (CONSOLE_HOST is unset here: set it, or the owner can administer nothing).');
      return 0;
    }
    out(`\nOn the console host${consoleCurl(config)?.hostHeader ? ` (${config.consoleHost})` : ''}:\n  ${redeem}`);
    const leave = leaveSetupCommands(config);
    if (config.mailTransport !== 'none') out(`Then verify an e-mail address (or add a passkey in a browser):\n${leave.map((c) => `  ${c}`).join('\n')}`);
    return 0;
  } finally {
    await database.close();
  }
}

export const recoverOwner: Command = {
  verb: 'recover-owner',
  summary: 'mint a one-time token that signs in as the existing owner (audited), against the database',
  usage: 'felis recover-owner [--username NAME]\n\n  --username NAME  the owner to recover, when there are several\n\nPostgreSQL: beside the running service. The embedded database: with the service stopped.',
  run,
};
