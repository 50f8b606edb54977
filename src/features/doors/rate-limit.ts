import { createMiddleware } from 'hono/factory';
import type { Queryable } from '../../db/client.js';
import { clientIp } from '../../http/client-ip.js';
import type { AppEnv } from '../../http/env.js';
import { DomainError } from '../../lib/errors.js';
import { giveBucketTokenBack, takeBucketToken, type BucketVerdict } from '../accounts/index.js';
import { addressKey } from './address.js';

/** Public sign-in doors: burst 20, refilled 20 a minute (api-extensions, limits). */
export const DOOR_BURST = 20;
export const DOOR_REFILL_PER_SECOND = 20 / 60;

/** Takes one token from the bucket `key` (the accounts feature keeps the buckets); a door's limit by default. */
export function takeToken(db: Queryable, key: string, now: Date, burst = DOOR_BURST, perSecond = DOOR_REFILL_PER_SECOND): Promise<BucketVerdict> {
  return takeBucketToken(db, key, now, burst, perSecond);
}

/** Returns a token taken for an attempt that was not made (refused by something else), up to `burst`. */
export function giveTokenBack(db: Queryable, key: string, burst = DOOR_BURST): Promise<void> {
  return giveBucketTokenBack(db, key, burst);
}

/** The bucket of one client address, shared by every public door (api-extensions, limits). */
export const doorBucketKey = (address: string): string => `door:${addressKey(address)}`;

/** 429 rate_limited with the seconds until a token is back. */
export function rateLimited(verdict: BucketVerdict, message?: string): DomainError {
  return new DomainError('rate_limited', message, { retryAfterSeconds: verdict.retryAfter });
}

/**
 * The per-address limit of the public sign-in doors, counted in the database so that replicas
 * share it. One bucket per address for all doors together: `door` only names the door in the log.
 * Runs before the body is validated: malformed requests count too.
 */
export function doorLimit(door: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { deps } = c.var;
    const verdict = await takeToken(deps.database.db, doorBucketKey(clientIp(c)), deps.clock.now());
    if (!verdict.allowed) {
      deps.log.info({ door, request_id: c.var.requestId }, 'door limit reached');
      throw rateLimited(verdict);
    }
    await next();
  });
}

/** Signed-in code doors (a link code, a migration code): 10 attempts an account, then one a minute. */
export const CODE_ATTEMPT_BURST = 10;
export const CODE_ATTEMPT_REFILL_PER_SECOND = 1 / 60;

/**
 * The attempt limit of a code door behind a session (the app tier): counted in the database per
 * account (`code:<door>:<user>`), so that guessing from many addresses or replicas earns nothing,
 * and per address in the bucket every public door shares. A refused attempt is not tried at all,
 * a right code included. Runs after the session check and before the body is validated.
 */
export function codeAttemptLimit(door: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { deps } = c.var;
    const now = deps.clock.now();
    const userId = (c.var as { session?: { userId: string } }).session?.userId;
    const byAccount = userId
      ? await takeToken(deps.database.db, `code:${door}:${userId}`, now, CODE_ATTEMPT_BURST, CODE_ATTEMPT_REFILL_PER_SECOND)
      : { allowed: true, retryAfter: 0 };
    const verdict = byAccount.allowed ? await takeToken(deps.database.db, doorBucketKey(clientIp(c)), now) : byAccount;
    if (!verdict.allowed) {
      deps.log.info({ door, request_id: c.var.requestId }, 'code attempt limit reached');
      throw rateLimited(verdict, 'Too many codes tried; wait and try again.');
    }
    await next();
  });
}
