// `node dist/cli/recover-owner.js` (docs/operators.md): the same as `felis recover-owner`.
import { recoverOwner } from './commands/recover-owner.js';
import { runAlone } from './run-command.js';

runAlone(recoverOwner);
