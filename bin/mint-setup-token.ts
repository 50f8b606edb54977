/**
 * Mints a new first-run setup token against the configured database (DATABASE_URL, or the
 * embedded one in DATA_DIR) and prints it, replacing any live token. Refuses once an owner exists.
 *
 *   npm run setup-token
 */
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { mintSetupToken, redeemCommand } from '../src/features/auth/index.js';
import { systemClock } from '../src/lib/clock.js';
import { databaseFailure } from '../src/startup-failure.js';
import { cryptoRandom } from '../src/lib/random.js';

async function main(): Promise<number> {
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }).catch((err: unknown) => {
    throw databaseFailure(err, config, { command: true });
  });
  try {
    const minted = await mintSetupToken({ clock: systemClock, random: cryptoRandom, database });
    if (!minted) {
      process.stderr.write('An owner already exists: setup is over, no token minted. A lost owner: `npm run recover-owner`.\n');
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

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
