import { ClusterNoPodError, ClusterNotFoundError } from '../../adapters/cluster/types.js';
import { RconCommandTooLongError, RconUnavailableError } from '../../adapters/rcon/client.js';
import { writeAudit } from '../audit/index.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import type { SessionContext } from '../../http/session.js';
import { requireAccess, requireServer, type CachedServer, type Need } from '../servers/index.js';
import { normaliseCommand } from './charset.js';
import { isUnknownCommand } from './replies.js';
import type { ServersParts } from '../servers/index.js';

export type ConsoleDeps = Pick<Deps, 'cluster' | 'config' | 'database' | 'log' | 'rcon' | 'clock'> & ServersParts;

/** The server a console operation acts on: 404 unknown, 403 unless the access rule admits `need`. */
export async function consoleServer(deps: ConsoleDeps, name: string, session: SessionContext, need: Need): Promise<CachedServer> {
  const server = await requireServer(deps, name);
  await requireAccess(deps, name, session, need, `Only ${name}'s owner or staff may use its console.`);
  return server;
}

function requireRunning(server: CachedServer): void {
  if (server.resource.status.phase !== 'Running') {
    throw new DomainError('not_running', `${server.resource.spec.name} is not running; wake it first.`);
  }
}

/**
 * Runs one already-checked command on a server over its reused RCON connection. The password is
 * read from the server's secret by the cluster adapter and never leaves it or reaches a log.
 */
export async function rconCommand(deps: ConsoleDeps, name: string, command: string): Promise<string> {
  try {
    return await deps.rcon.command(name, command);
  } catch (err) {
    if (err instanceof ClusterNoPodError) throw new DomainError('not_running', `${name} is not running; wake it first.`);
    if (err instanceof ClusterNotFoundError) throw new DomainError('not_found', `No server named ${name}.`);
    if (err instanceof RconCommandTooLongError) throw new DomainError('bad_request', err.message);
    const reason = err instanceof RconUnavailableError ? err.message : 'the cluster cannot be asked for it';
    deps.log.warn({ server: name, err: (err as Error).name, reason }, 'RCON unreachable');
    throw new DomainError('console_unavailable', `${name}'s console cannot be reached now; try again in a moment.`, { cause: err });
  }
}

/** Who asks: a signed-in session (the server's owner or staff), and its request for the audit row. */
export interface ConsoleCaller {
  session: SessionContext;
  requestId: string | undefined;
}

export interface ConsoleAction {
  name: string;
  /** What the access rule must admit: `console.command` for a typed command, `access` for the access operations. */
  need: Need;
  command: string;
  /** Audit action of a change (absent for reads). */
  audit?: { action: string; detail: Record<string, unknown> };
  /** An `lp` command: a server without LuckPerms answers 409 luckperms_missing. */
  luckPerms?: boolean;
}

/** The spine of the command and access operations: owner or staff, running, then one RCON command. */
export async function runConsoleAction(deps: ConsoleDeps, caller: ConsoleCaller, action: ConsoleAction): Promise<string> {
  const server = await consoleServer(deps, action.name, caller.session, action.need);
  requireRunning(server);
  const output = await rconCommand(deps, action.name, action.command);
  if (action.luckPerms && isUnknownCommand(output)) {
    throw new DomainError('luckperms_missing', `LuckPerms is not installed on ${action.name}, so permission and group changes have no effect.`);
  }
  if (action.audit) {
    await writeAudit(deps.database.db, {
      at: deps.clock.now(),
      actor: caller.session,
      action: action.audit.action,
      target: action.name,
      detail: action.audit.detail,
      requestId: caller.requestId ?? null,
    });
  }
  return output;
}

/** One console command as typed (checked and normalised first), audited. */
export async function consoleCommand(deps: ConsoleDeps, caller: ConsoleCaller, name: string, command: string): Promise<string> {
  const checked = normaliseCommand(command);
  if ('problem' in checked) throw new DomainError('bad_request', checked.problem);
  return runConsoleAction(deps, caller, { name, need: 'console.command', command: checked.command, audit: { action: 'console.command', detail: {} } });
}
