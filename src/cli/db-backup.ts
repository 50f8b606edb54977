// `node dist/cli/db-backup.js` (deploy/base/db-backup-cronjob.yaml): the same as `felis db backup`.
import { dbBackup } from './commands/db-backup.js';
import { runAlone } from './run-command.js';

runAlone(dbBackup);
