import { z } from '@hono/zod-openapi';
import type { ServerSpecPatch } from '../../adapters/cluster/types.js';
import { AUTOSTART_POLICIES, DESIRED_STATES } from '../../adapters/cluster/types.js';
import { writeAudit } from '../audit/index.js';
import { DomainError } from '../../lib/errors.js';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { imageFor } from './create.js';
import { clusterCall, requireServer } from './lookup.js';
import { quantity, ServerNameParam } from './schema.js';

/** The original panel's edit form (api-extensions: camelCase, as the original). */
export const PatchServerBody = z
  .strictObject({
    displayName: z.string().trim().min(1).max(64).optional(),
    autostartPolicy: z.enum(AUTOSTART_POLICIES).optional(),
    image: z.string().min(1).max(512).optional(),
    confirmImageChange: z.boolean().optional(),
    memory: quantity('memory').optional(),
    idleStopSeconds: z.number().int().min(0).max(7 * 24 * 3600).optional(),
    resources: z
      .strictObject({
        cpu: quantity('cpu').optional(),
        cpuRequest: quantity('cpu').optional(),
        memory: quantity('memory').optional(),
        memoryRequest: quantity('memory').optional(),
      })
      .optional(),
  })
  .openapi('PatchServer');

const patchRoute = defineRoute({ tier: 'admin' }, {
  method: 'patch',
  path: '/api/v1/servers/{name}',
  summary: 'Change a server: display name, autostart policy, image (confirmed, pinned like create), limits, idle stop',
  request: { params: ServerNameParam, ...jsonBody(PatchServerBody) },
  responses: {
    200: json(z.object({ name: z.string(), desiredState: z.enum(DESIRED_STATES) }).openapi('PatchedServer'), 'changed'),
    400: errorAnswer('bad_request (an image change without confirmImageChange), image_not_whitelisted or image_not_in_registry'),
    404: errorAnswer('no such server'),
    503: errorAnswer('registry_unavailable, or the cluster cannot be reached'),
  },
});

/** The admin's edit of a server. External face, admin tier. */
export function serverPatchRoutes() {
  return createRouter().openapi(patchRoute, async (c) => {
    const { deps } = c.var;
    const { name } = c.req.valid('param');
    const body = c.req.valid('json');
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
      await writeAudit(deps.database.db, {
        at: deps.clock.now(),
        actor: c.var.session.userId,
        action: 'server.update',
        target: name,
        detail: { ...patch },
        requestId: c.var.requestId ?? null,
      });
    }
    return c.json({ name, desiredState: updated.spec.desiredState ?? 'Stopped' }, 200);
  });
}
