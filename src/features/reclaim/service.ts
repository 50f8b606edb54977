import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { isStaffRole, findUserByMcUuid } from '../accounts/index.js';
import { writeAudit } from '../audit/index.js';
import { barPlayer, type VerifierParts } from '../verifier/index.js';

/** How long a reclaimed player's data is held (contract section 8). */
export const RECLAIM_HOLD_MS = 30 * 24 * 60 * 60 * 1000;

export interface ReclaimInput {
  squatterUuid: string;
  username: string;
  dataRef?: string;
  requestId?: string;
}

/**
 * Bars a squatter UUID (never the name) and holds its data. A repeat is a no-op that answers the
 * first hold's expiry. A UUID linked to a staff account is never reclaimed (409 protected_admin),
 * and the refusal is audited. The bar reaches this replica's verifier at once, the others within
 * the bar list's staleness bound.
 */
export async function reclaim(deps: Pick<Deps & VerifierParts, 'clock' | 'database' | 'sessionVerifier'>, input: ReclaimInput): Promise<Date> {
  const db = deps.database.db;
  const now = deps.clock.now();
  const detail = { squatter_uuid: input.squatterUuid, username: input.username };
  const owner = await findUserByMcUuid(db, input.squatterUuid);
  if (owner && isStaffRole(owner.role)) {
    await writeAudit(db, { at: now, actor: 'proxy', action: 'player.reclaim.refused', target: input.squatterUuid, detail: { ...detail, reason: 'protected_admin' }, requestId: input.requestId });
    throw new DomainError('protected_admin', 'That UUID belongs to a linked staff account and cannot be reclaimed.');
  }
  const bar = await barPlayer(db, {
    mcUuid: input.squatterUuid,
    username: input.username,
    barredAt: now,
    holdExpiresAt: new Date(now.getTime() + RECLAIM_HOLD_MS),
    dataRef: input.dataRef ?? null,
  });
  if (bar.barred) {
    deps.sessionVerifier.barList.invalidate();
    await writeAudit(db, { at: now, actor: 'proxy', action: 'player.reclaim', target: input.squatterUuid, detail, requestId: input.requestId });
  }
  return bar.holdExpiresAt;
}
