import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, type Config } from './config.js';
import { EmbeddedDatabaseBusy } from './db/embedded-lock.js';

/**
 * A failure at start-up that the operator fixes by changing something: its message is the one line
 * to print, naming what to change. main.ts prints it with no stack trace.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

type Errorish = { code?: unknown; message?: unknown; path?: unknown; hostname?: unknown };
const codeOf = (err: unknown) => (typeof (err as Errorish)?.code === 'string' ? ((err as Errorish).code as string) : undefined);
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Inside a Kubernetes pod (the kubelet sets KUBERNETES_SERVICE_HOST), or with CLUSTER=kubernetes
 * from anywhere, the embedded database is refused: each replica would keep its own accounts,
 * sessions, leases and upload sessions, a pod's disk goes with it, and it needs about 1 GiB of
 * memory (docs/operators.md). PostgreSQL is the database there. SINGLE_REPLICA=true is the
 * operator saying that exactly one process runs against this cluster (and keeps its DATA_DIR):
 * then the embedded database is allowed.
 */
export function refuseEmbeddedInKubernetes(config: Pick<Config, 'databaseUrl'> & Partial<Pick<Config, 'cluster' | 'singleReplica'>>, env: NodeJS.ProcessEnv): void {
  if (config.databaseUrl?.startsWith('postgres') || config.singleReplica) return;
  if (config.cluster === 'kubernetes') {
    throw new StartupError(
      'the embedded database is refused with CLUSTER=kubernetes (each replica would keep its own accounts, leases and uploads): set DATABASE_URL=postgres://…, or SINGLE_REPLICA=true if exactly one replica ever runs (docs/operators.md)',
    );
  }
  if (!env.KUBERNETES_SERVICE_HOST) return;
  throw new StartupError(
    'the embedded database is refused inside Kubernetes (one per replica, lost with the pod, about 1 GiB of memory): set DATABASE_URL=postgres://…, or SINGLE_REPLICA=true if exactly one replica ever runs (docs/operators.md)',
  );
}

/** A face that could not listen on its port, in the words of the variable to change. */
export function listenFailure(err: unknown, face: 'external' | 'internal', config: Pick<Config, 'host' | 'externalPort' | 'internalPort'>): Error {
  const variable = face === 'external' ? 'EXTERNAL_PORT' : 'INTERNAL_PORT';
  const port = face === 'external' ? config.externalPort : config.internalPort;
  switch (codeOf(err)) {
    case 'EADDRINUSE':
      return new StartupError(`port ${port} on ${config.host} (${variable}) is in use, perhaps by another Felis: stop what holds it, or set ${variable} to a free port`);
    case 'EACCES':
      return new StartupError(`no permission to listen on port ${port} (${variable}): set ${variable} to a port above 1023`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${config.host} is not an address of this machine: set HOST (127.0.0.1 for this machine only, 0.0.0.0 for every interface)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`HOST ${config.host} does not resolve: set HOST to an address of this machine (127.0.0.1, 0.0.0.0)`);
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}

/** `host:port/database` of a PostgreSQL URL, without its user's password. */
function where(url: string): { at: string; database: string; user: string; host: string; port: string } {
  try {
    const u = new URL(url);
    const port = u.port || '5432';
    const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
    return { at: `${u.hostname}:${port}`, database, user: decodeURIComponent(u.username) || 'postgres', host: u.hostname, port };
  } catch {
    return { at: 'DATABASE_URL', database: '?', user: '?', host: '?', port: '?' };
  }
}

/**
 * Opening or migrating the database failed: the one line saying what to change, when it is known.
 * `command`: an operator command (recover-owner, setup-token) rather than the service.
 */
export function databaseFailure(err: unknown, config: Pick<Config, 'databaseUrl' | 'dataDir'>, options: { command?: boolean } = {}): Error {
  const code = codeOf(err);
  if (err instanceof EmbeddedDatabaseBusy) {
    return new StartupError(
      options.command
        ? `${err.message}: stop the service first (an embedded database opens in one process at a time), run this again, then start the service`
        : `${err.message}: stop that process first, or give this one its own DATA_DIR (a second service on one embedded database would corrupt it)`,
    );
  }
  if (config.databaseUrl?.startsWith('postgres')) {
    const pg = where(config.databaseUrl);
    switch (code) {
      case 'ECONNREFUSED':
        return new StartupError(`no PostgreSQL answers at ${pg.at} (connection refused): start it, or set DATABASE_URL (unset: the embedded database in DATA_DIR)`);
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return new StartupError(`the database host ${pg.host} does not resolve: correct the host in DATABASE_URL`);
      case 'ETIMEDOUT':
      case 'CONNECT_TIMEOUT':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return new StartupError(`PostgreSQL at ${pg.at} does not answer (${code}): check that it runs and is reachable from here, or set DATABASE_URL`);
      case '3D000':
        return new StartupError(`database "${pg.database}" does not exist on ${pg.at}: create it (createdb -h ${pg.host} -p ${pg.port} -U ${pg.user} ${pg.database}), or set DATABASE_URL`);
      case '28P01':
      case '28000':
        return new StartupError(`PostgreSQL at ${pg.at} refused user "${pg.user}" (${messageOf(err)}): correct the user or password in DATABASE_URL`);
      case '42501':
        return new StartupError(`user "${pg.user}" may not create the schema in database "${pg.database}" on ${pg.at} (${messageOf(err)}): grant it, or set DATABASE_URL`);
      default:
        return err instanceof Error ? err : new Error(String(err));
    }
  }
  // The embedded database: its folder under DATA_DIR must be a folder this user may write.
  const path = String((err as Errorish).path ?? config.dataDir);
  // A recursive mkdir that cannot create a missing parent says ENOENT whatever stopped it (a
  // read-only file system, no permission): ask the nearest folder that exists for the real cause.
  const cause = code === 'ENOENT' && (err as { syscall?: unknown }).syscall === 'mkdir' ? unwritableAncestor(path) : undefined;
  if (cause) {
    return new StartupError(`DATA_DIR ${config.dataDir} is not writable: ${cause.path} is ${cause.why}: set DATA_DIR to a writable folder, or DATABASE_URL for PostgreSQL`);
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOTDIR' || code === 'EEXIST') {
    return new StartupError(`DATA_DIR ${config.dataDir} is not a folder this user can write (${code} on ${path}): set DATA_DIR, or DATABASE_URL for PostgreSQL`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** The nearest existing folder above `path`, and why this user cannot create a folder in it (if so). */
function unwritableAncestor(path: string): { path: string; why: string } | undefined {
  let at = resolve(path);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK);
    return undefined;
  } catch (err) {
    const why = { EROFS: 'on a read-only file system', EACCES: 'not writable by this user', EPERM: 'not writable by this user' }[codeOf(err) ?? ''];
    return { path: at, why: why ?? `not writable (${codeOf(err) ?? messageOf(err)})` };
  }
}

// A PostgreSQL that is not up yet (down, starting, unreachable for now), as opposed to one that
// refuses us (a user, a password, a missing database, a host that does not exist).
const NOT_UP_YET = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
  '53300', '57P01', '57P02', '57P03',
]);

/**
 * Whether a failure to open or migrate PostgreSQL at start-up is an outage that the service waits
 * out (serving 503 meanwhile) rather than a configuration to correct. The embedded database never
 * is: its failures are the folder's.
 */
export function databaseNotUpYet(err: unknown, config: Pick<Config, 'databaseUrl'>): boolean {
  if (!config.databaseUrl?.startsWith('postgres')) return false;
  for (let at = err, depth = 0; at instanceof Error && depth < 8; at = at.cause, depth++) {
    const code = codeOf(at);
    if (code && (NOT_UP_YET.has(code) || code.startsWith('08'))) return true;
  }
  return false;
}

/**
 * The one line main.ts prints for a failure at start-up: a fixable one as it is, a configuration
 * error on one line, anything else as its message, with the stack only at LOG_LEVEL debug or trace.
 */
export function startupFailureLine(err: unknown, logLevel?: string): string {
  if (err instanceof StartupError) return err.message;
  if (err instanceof ConfigError) return err.message.replace(/:?\n\s+/g, (m) => (m.startsWith(':') ? ': ' : '; '));
  const verbose = logLevel === 'debug' || logLevel === 'trace';
  if (verbose && err instanceof Error && err.stack) return `failed to start: ${err.stack}`;
  return `failed to start: ${messageOf(err)}${verbose ? '' : ' (LOG_LEVEL=debug prints where)'}`;
}
