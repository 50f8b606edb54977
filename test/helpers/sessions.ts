import { eq } from 'drizzle-orm';
import { linkedAccounts, users, type SignInMethod, type UserRole } from '../../src/db/schema/accounts.js';
import type { Deps } from '../../src/deps.js';
import { isStaffRole } from '../../src/features/accounts/roles.js';
import { bareHost } from '../../src/features/accounts/sessions/hosts.js';
import { mintSession, SESSION_COOKIE } from '../../src/features/accounts/sessions/session-service.js';

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export interface CreateUserOptions {
  role?: UserRole;
  username?: string;
  email?: string;
  emailVerified?: boolean;
  disabled?: boolean;
  inSetup?: boolean;
  passwordHash?: string;
  mustChangePassword?: boolean;
}

/** Inserts an account straight into the database (unique username unless given). */
export async function createUser(deps: Deps, options: CreateUserOptions = {}): Promise<{ id: string; username: string }> {
  const now = deps.clock.now();
  const username = options.username ?? `user_${unique()}`;
  const [row] = await deps.database.db
    .insert(users)
    .values({
      username,
      email: options.email ?? null,
      emailVerified: options.emailVerified ?? false,
      role: options.role ?? 'user',
      disabled: options.disabled ?? false,
      inSetup: options.inSetup ?? false,
      passwordHash: options.passwordHash ?? null,
      mustChangePassword: options.mustChangePassword ?? false,
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: users.id, username: users.username });
  return row!;
}

export interface SignedIn {
  cookie: string;
  headers: Record<string, string>;
  /** sha-256 of the cookie: the session's id in the revoke routes. */
  tokenHash: string;
}

/**
 * A session minted by the real session service, as a browser would hold it: `Cookie` and `Host`
 * headers. The host defaults to the console host for staff and the panel host for players.
 */
export async function signIn(
  deps: Deps,
  options: { userId: string; host?: string; method?: SignInMethod; userAgent?: string },
): Promise<SignedIn> {
  const [user] = await deps.database.db.select({ role: users.role }).from(users).where(eq(users.id, options.userId));
  if (!user) throw new Error(`signIn: no user ${options.userId}`);
  const host =
    options.host ?? (isStaffRole(user.role) ? deps.config.consoleHost : deps.config.panelHost) ?? 'localhost';
  const minted = await mintSession(deps, deps.database.db, {
    userId: options.userId,
    host: bareHost(host),
    method: options.method ?? 'passkey',
    userAgent: options.userAgent ?? 'vitest',
    clientIp: '127.0.0.1',
  });
  const cookie = `${SESSION_COOKIE}=${minted.token}`;
  return { cookie, headers: { Cookie: cookie, Host: host }, tokenHash: minted.tokenHash };
}

/** Links an in-game UUID to an account, as the linking feature will. */
export async function linkAccount(
  deps: Deps,
  options: { userId: string; mcUuid: string; authSource?: 'primary' | 'thirdparty' },
): Promise<void> {
  await deps.database.db.insert(linkedAccounts).values({
    mcUuid: options.mcUuid.toLowerCase(),
    userId: options.userId,
    authSource: options.authSource ?? 'primary',
    verifiedAt: deps.clock.now(),
  });
}
