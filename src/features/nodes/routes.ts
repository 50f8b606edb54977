import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { ServerNameParam, type ServersParts } from '../servers/index.js';
import type { NodesParts } from './cache.js';
import { beginMove, latestMove, retryMove } from './moves.js';
import { MigrationSchema, NodeControlSchema, NodeName, NodesSchema, NodeTaskRequest, NodeTaskSchema, TaskIdParam } from './schema.js';
import { listNodes, nodeControl, nodeTask, requireOwner, retryNodeTask, startNodeTask } from './service.js';
import type { WorldsParts } from '../worlds/index.js';
import type { AppDeps } from '../../http/env.js';

const ADMIN = { tier: 'admin' } as const;
const OWNER_ONLY = 'forbidden (node control is the owner\'s), setup_required or cross_site';

const nodes = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/nodes',
  summary: 'The game nodes as the cluster sees them, with the servers placed on each',
  responses: {
    200: json(NodesSchema, 'the nodes'),
    503: errorAnswer('distributed_unavailable (the cluster reports no nodes) or unavailable'),
  },
});

const control = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/settings/node-control',
  summary: 'Node control: whether the cluster allows it, and the last tasks (owner only)',
  responses: { 200: json(NodeControlSchema, '`available: false` when the cluster refuses node writes'), 403: errorAnswer(OWNER_ONLY) },
});

const start = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/settings/node-control/tasks',
  summary: 'Start a node task: approve, cordon, drain, return or remove a node (owner only, reauth)',
  request: jsonBody(NodeTaskRequest),
  responses: {
    202: json(NodeTaskSchema, 'the task, running'),
    400: errorAnswer('bad_request or bad_node'),
    403: errorAnswer(`reauth_required, or ${OWNER_ONLY}`),
    409: errorAnswer('node_operation_busy (a task runs), or conflict (remove: worlds still on the node)'),
    503: errorAnswer('node_control_unavailable or unavailable'),
  },
});

const task = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/settings/node-control/tasks/{id}',
  summary: 'A node task with its log (owner only)',
  request: { params: TaskIdParam },
  responses: {
    200: json(NodeTaskSchema, 'the task'),
    403: errorAnswer(OWNER_ONLY),
    404: errorAnswer('not_found'),
    503: errorAnswer('node_control_unavailable'),
  },
});

const retry = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/settings/node-control/tasks/{id}/retry',
  summary: 'Start a failed node task again, as a new task (owner only, reauth)',
  request: { params: TaskIdParam },
  responses: {
    202: json(NodeTaskSchema, 'the new task, running'),
    400: errorAnswer('bad_node'),
    403: errorAnswer(`reauth_required, or ${OWNER_ONLY}`),
    404: errorAnswer('not_found'),
    409: errorAnswer('conflict (only a failed task is retried) or node_operation_busy'),
    503: errorAnswer('node_control_unavailable'),
  },
});

const MoveIdParam = ServerNameParam.extend({ id: z.string().regex(/^[a-f0-9]{32}$/, 'must be a migration id') });

const migration = defineRoute(ADMIN, {
  method: 'get',
  path: '/api/v1/servers/{name}/migrations',
  summary: "The server's last move to another node (staff)",
  request: { params: ServerNameParam, query: z.strictObject({ id: z.string().regex(/^[a-f0-9]{32}$/).optional() }) },
  responses: { 200: json(MigrationSchema, 'the move'), 404: errorAnswer('not_found') },
});

const migrate = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/servers/{name}/migrations',
  summary: "Move a stopped server's world to another node (staff); the world lock is held throughout",
  request: { params: ServerNameParam, ...jsonBody(z.strictObject({ targetNode: NodeName })) },
  responses: {
    202: json(MigrationSchema, 'the move: where volumes are shared, succeeded or failed at its step; on node-local volumes, running (its copy goes on: GET follows its stage)'),
    400: errorAnswer('bad_request or bad_node'),
    404: errorAnswer('not_found'),
    409: errorAnswer('migration_busy (not stopped, or another move unfinished), node_operation_busy or maintenance_in_progress'),
    503: errorAnswer('distributed_unavailable or unavailable'),
  },
});

const migrateRetry = defineRoute(ADMIN, {
  method: 'post',
  path: '/api/v1/servers/{name}/migrations/{id}/retry',
  summary: 'Retry a failed move, or one whose runner died (its world lock lapsed): before its switch from the archive again, after it only the release (staff)',
  request: { params: MoveIdParam },
  responses: {
    202: json(MigrationSchema, 'the move, with its attempt counted'),
    400: errorAnswer('bad_node'),
    404: errorAnswer('not_found'),
    409: errorAnswer('migration_busy (only a failed or abandoned move is retried) or node_operation_busy'),
    503: errorAnswer('distributed_unavailable or unavailable'),
  },
});

export function nodeRoutes(deps: AppDeps & WorldsParts & ServersParts & NodesParts) {
  return createRouter()
    .openapi(nodes, async (c) => c.json(await listNodes(deps), 200))
    .openapi(control, async (c) => {
      requireOwner(c.var.session);
      return c.json(await nodeControl(deps), 200);
    })
    .openapi(start, async (c) => {
      requireOwner(c.var.session);
      return c.json(await startNodeTask(deps, c.var.session, c.req.valid('json'), c.var.requestId), 202);
    })
    .openapi(task, async (c) => {
      requireOwner(c.var.session);
      return c.json(await nodeTask(deps, c.req.valid('param').id), 200);
    })
    .openapi(retry, async (c) => {
      requireOwner(c.var.session);
      return c.json(await retryNodeTask(deps, c.var.session, c.req.valid('param').id, c.var.requestId), 202);
    })
    .openapi(migration, async (c) => c.json(await latestMove(deps, c.req.valid('param').name, c.req.valid('query').id), 200))
    .openapi(migrate, async (c) =>
      c.json(await beginMove(deps, c.var.session, c.req.valid('param').name, c.req.valid('json').targetNode, c.var.requestId), 202),
    )
    .openapi(migrateRetry, async (c) => {
      const { name, id } = c.req.valid('param');
      return c.json(await retryMove(deps, c.var.session, name, id, c.var.requestId), 202);
    });
}
