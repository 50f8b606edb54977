// `node dist/cli/db-backup.js` (deploy/db-backup-cronjob.yaml): the same as `felis db backup`.
import { dbBackup } from './commands/db-backup.js';
import { runAlone } from './run-command.js';

runAlone(dbBackup);
