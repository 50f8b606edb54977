import { BUILD_STATUSES, type BuildStatus } from '../../db/schema/builds.js';

/** The legal moves of a build; a terminal status has none. */
const MOVES: Record<BuildStatus, readonly BuildStatus[]> = {
  pending: ['building', 'failed', 'cancelled'],
  building: ['succeeded', 'failed', 'cancelled'],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export function isTerminal(status: BuildStatus): boolean {
  return MOVES[status].length === 0;
}

export function canMove(from: BuildStatus, to: BuildStatus): boolean {
  return MOVES[from].includes(to);
}

/** The statuses a build may be in for a move to `to`: the guard of the conditional update. */
export function sourcesOf(to: BuildStatus): BuildStatus[] {
  return BUILD_STATUSES.filter((from) => canMove(from, to));
}
