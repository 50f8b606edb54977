/**
 * Mints a new first-run setup token against the configured database (DATABASE_URL, or the
 * embedded one in DATA_DIR) and prints it, replacing any live token. Refuses once an owner exists.
 *
 *   felis setup-token        (npm run setup-token)
 */
import { loadConfig } from '../../config.js';
import { openDatabase } from '../../db/client.js';
import { mintSetupToken, redeemCommand } from '../../features/auth/index.js';
import { systemClock } from '../../lib/clock.js';
import { databaseFailure } from '../../startup-failure.js';
import { cryptoRandom } from '../../lib/random.js';
import { UsageError, type Command } from '../command.js';

async function run(args: string[]): Promise<number> {
  if (args.length > 0) throw new UsageError(`felis setup-token takes no arguments (got ${args.join(' ')})`);
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }).catch((err: unknown) => {
    throw databaseFailure(err, config, { command: true });
  });
  try {
    const minted = await mintSetupToken({ clock: systemClock, random: cryptoRandom, database });
    if (!minted) {
      process.stderr.write('An owner already exists: setup is over, no token minted. A lost owner: `felis recover-owner`.\n');
      return 1;
    }
    const redeem = redeemCommand(config, minted.token);
    process.stdout.write(
      `Setup token (valid until ${minted.expiresAt.toISOString()}, single use):\n${minted.token}\n` +
        'Become the owner with POST /api/v1/auth/setup/redeem {"token", "username"?, "email"?}' +
        (redeem ? ` on the console host:\n  ${redeem}\n` : ' on the console host (CONSOLE_HOST is unset: set it).\n'),
    );
    return 0;
  } finally {
    await database.close();
  }
}

export const setupToken: Command = {
  verb: 'setup-token',
  summary: 'mint a new first-run setup token (before an owner exists), against the database',
  usage: 'felis setup-token\n\nReplaces any live setup token; refused once an owner exists (then: felis recover-owner).',
  run,
};
