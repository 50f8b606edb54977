import { z } from '@hono/zod-openapi';

export const NODE_ACTIONS = ['approve', 'cordon', 'drain', 'return', 'remove'] as const;
export type NodeAction = (typeof NODE_ACTIONS)[number];
export const TASK_STATES = ['running', 'succeeded', 'failed'] as const;

/** A Kubernetes node name: DNS labels joined by dots, at most 63 characters (the original's rule). */
export const NodeName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, 'must be a node name');

/**
 * The original's task request. `sshTarget`, `externalIP` and `peers` drove its K3s hosts; they are
 * accepted (so its panel works unchanged) and unused on Kubernetes, where the node already exists.
 */
export const NodeTaskRequest = z
  .strictObject({
    action: z.enum(NODE_ACTIONS),
    name: NodeName,
    sshTarget: z.string().max(253).regex(/^[a-zA-Z0-9][a-zA-Z0-9_.@:-]{0,252}$/).optional(),
    externalIP: z.string().max(64).optional(),
    peers: z.array(z.string().max(64)).max(100).optional(),
    confirmMaintenance: z.literal(true, { message: 'maintenance impact confirmation is required' }),
  })
  .openapi('NodeTaskRequest');
export type NodeTaskRequest = z.infer<typeof NodeTaskRequest>;

export const NodeTaskSchema = z
  .object({
    id: z.string(),
    request: NodeTaskRequest,
    actor: z.string(),
    state: z.enum(TASK_STATES),
    stage: z.string(),
    startedAt: z.string(),
    finishedAt: z.string().optional(),
    error: z.string().optional(),
    log: z.string().optional(),
  })
  .openapi('NodeTask');
export type NodeTaskView = z.infer<typeof NodeTaskSchema>;

export const NodeControlSchema = z.object({ available: z.boolean(), tasks: z.array(NodeTaskSchema) }).openapi('NodeControl');

export const TaskIdParam = z.object({ id: z.string().regex(/^[a-f0-9]{32}$/, 'must be a task id') });

const Quantities = z.object({ cpu: z.string(), memory: z.string() });
export const NodeSchema = z
  .object({
    name: z.string(),
    role: z.string(),
    ready: z.boolean(),
    approved: z.boolean(),
    cordoned: z.boolean(),
    addresses: z.array(z.string()),
    architecture: z.string(),
    capacity: Quantities,
    allocatable: Quantities,
    /** Servers whose world is pinned to the node or whose pod runs there. */
    servers: z.array(z.string()),
    /** Servers on the node that hold a slot (desired running, or not yet stopped). */
    running: z.number().int(),
    /** The running cap of each node in force: the saved wake policy's, else the setting node_server_cap; 0 is no cap. */
    cap: z.number().int(),
    /** The node's last node-control task is running, or left it out of service. */
    maintenance: z.boolean(),
  })
  .openapi('Node');
export const NodesSchema = z.object({ nodes: z.array(NodeSchema), sharedVolumes: z.boolean() }).openapi('Nodes');

export const MigrationSchema = z
  .object({
    id: z.string(),
    server: z.string(),
    state: z.enum(TASK_STATES),
    stage: z.string(),
    sourceNode: z.string(),
    targetNode: z.string(),
    switched: z.boolean(),
    attempt: z.number().int(),
    started: z.string(),
    updated: z.string(),
    error: z.string().optional(),
  })
  .openapi('Migration');
