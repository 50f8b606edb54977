// `node dist/cli/db-restore.js BUNDLE` (docs/operators.md): the same as `felis db restore BUNDLE`.
import { dbRestore } from './commands/db-restore.js';
import { runAlone } from './run-command.js';

runAlone(dbRestore);
