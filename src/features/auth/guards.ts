import type { Context } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { isStaffRole } from '../accounts/authenticator.js';
import { isConsoleHost, requestHost } from '../accounts/hosts.js';

/** LOCAL_AUTH=off closes the local sign-in doors. */
export function requireLocalAuth<E extends AppEnv>(c: Context<E>): void {
  if (!c.var.deps.config.localAuth) throw new DomainError('local_auth_disabled', 'Local sign-in is disabled on this installation.');
}

/** A player session would be refused on the operator console, so none is minted there. */
export function refusePlayerOnConsole<E extends AppEnv>(c: Context<E>, role: string): void {
  if (!isStaffRole(role) && isConsoleHost(c.var.deps.config, requestHost(c))) {
    throw new DomainError('forbidden', 'Player accounts do not sign in to the operator console.');
  }
}
