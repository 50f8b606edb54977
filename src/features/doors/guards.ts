import type { Config } from '../../config.js';
import { DomainError } from '../../lib/errors.js';
import { isConsoleHost, isStaffRole } from '../accounts/index.js';

/** LOCAL_AUTH=off closes the local sign-in doors. */
export function requireLocalAuth(config: Config): void {
  if (!config.localAuth) throw new DomainError('local_auth_disabled', 'Local sign-in is disabled on this installation.');
}

/** A player session would be refused on the operator console, so none is minted there. */
export function refusePlayerOnConsole(config: Config, host: string, role: string): void {
  if (!isStaffRole(role) && isConsoleHost(config, host)) {
    throw new DomainError('forbidden', 'Player accounts do not sign in to the operator console.');
  }
}
