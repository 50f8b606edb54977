import type { DesiredState, ServerSpecPatch } from '../../adapters/cluster/types.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { writeAudit } from '../audit/index.js';
import { imageFor, type CreateDeps } from './create.js';
import { clusterCall, requireServer } from './core/index.js';
import type { PatchServerInput } from './core/index.js';

/**
 * The admin's edit of a server: display name, autostart policy, image (confirmed, pinned like
 * create), limits, idle stop. An edit that changes something is audited. Resolves the server's
 * desired state.
 */
export async function updateServer(
  deps: CreateDeps & Pick<Deps, 'clock'>,
  name: string,
  body: PatchServerInput,
  actor: string,
  requestId: string | undefined,
): Promise<DesiredState> {
  const server = await requireServer(deps, name);
  const { spec } = server.resource;
  const resources = body.resources ?? {};
  if (body.memory !== undefined && resources.memory !== undefined && body.memory !== resources.memory) {
    throw new DomainError('bad_request', 'memory and resources.memory differ; give one.');
  }
  const patch: ServerSpecPatch = {};
  if (body.image !== undefined) {
    const image = await imageFor(deps, body.image);
    if (image !== spec.image) {
      // A new image can break a world (a newer game version cannot be downgraded): said twice.
      if (body.confirmImageChange !== true) throw new DomainError('bad_request', 'Changing the image needs confirmImageChange: true.');
      patch.image = image;
    }
  }
  if (body.displayName !== undefined) patch.displayName = body.displayName;
  if (body.autostartPolicy !== undefined) patch.autostartPolicy = body.autostartPolicy;
  if (body.idleStopSeconds !== undefined) patch.idleStopSeconds = body.idleStopSeconds;
  const memory = resources.memory ?? body.memory;
  if (memory !== undefined) patch.memory = memory;
  if (resources.cpu !== undefined) patch.cpu = resources.cpu;
  if (resources.cpuRequest !== undefined) patch.cpuRequest = resources.cpuRequest;
  if (resources.memoryRequest !== undefined) patch.memoryRequest = resources.memoryRequest;
  const updated = Object.keys(patch).length === 0 ? server.resource : await clusterCall(name, () => deps.cluster.updateServer(name, patch));
  if (Object.keys(patch).length > 0) {
    await writeAudit(deps.database.db, { at: deps.clock.now(), actor, action: 'server.update', target: name, detail: { ...patch }, requestId: requestId ?? null });
  }
  return updated.spec.desiredState ?? 'Stopped';
}
