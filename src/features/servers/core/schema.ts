import { z } from '@hono/zod-openapi';
import { AUTOSTART_POLICIES, DESIRED_STATES, PHASES } from '../../../adapters/cluster/types.js';
import { McUuidSchema } from '../../accounts/index.js';
import { isQuantity } from '../../../adapters/cluster/quantity.js';
import { SERVER_NAME_PATTERN } from './names.js';
import { MEMBER_PERMISSIONS } from './access.js';
import { refusedAs } from '../../../http/coded-refusal.js';

export const PhaseSchema = z.enum(PHASES).openapi('Phase');
const AutostartPolicySchema = z.enum(AUTOSTART_POLICIES);
const DesiredStateSchema = z.enum(DESIRED_STATES);
const int32 = z.number().int();

export const ServerInfoSchema = z
  .object({
    name: z.string(),
    subdomain: z.string(),
    phase: PhaseSchema,
    ready: z.boolean(),
    playersOnline: int32,
    playersMax: int32,
    idleStopSeconds: int32,
    autostartPolicy: AutostartPolicySchema.optional(),
    desiredState: DesiredStateSchema.optional(),
    endpointMode: z.string().optional(),
    endpointAddress: z.string().optional(),
    displayName: z.string().optional(),
    image: z.string().optional(),
    javaMemory: z.string().optional(),
    memory: z.string().optional(),
    storageSize: z.string().optional(),
    cpu: z.string().optional(),
    playerCountUnknown: z.boolean().optional(),
    legacyForwarding: z.boolean().optional(),
    autoRestarts: int32.optional(),
    startGaveUp: z.boolean().optional(),
  })
  .openapi('ServerInfo');
export type ServerInfo = z.infer<typeof ServerInfoSchema>;

/** A pending retirement, as its own route answers it; absent while the server is not retiring. */
export const RetiringSchema = z.object({ requested_at: z.iso.datetime({ offset: true }), delete: z.boolean() }).openapi('Retiring');
export type RetiringView = z.infer<typeof RetiringSchema>;

/** A server's status on the external face: the proxy's view, and its retirement when one is pending. */
export const ServerStatusSchema = ServerInfoSchema.extend({ retiring: RetiringSchema.optional() }).openapi('ServerStatus');

export const FleetServerSchema = ServerInfoSchema.extend({
  retiring: RetiringSchema.optional(),
  owned: z.boolean(),
  claimable: z.boolean(),
  owner: z.string().optional(),
  ownerUnknown: z.boolean().optional(),
  system: z.boolean(),
}).openapi('FleetServer');
export type FleetServer = z.infer<typeof FleetServerSchema>;

export const MyServerViewSchema = z
  .object({
    name: z.string(),
    subdomain: z.string(),
    owned: z.boolean(),
    claimable: z.boolean(),
    playersOnline: int32,
    playersMax: int32,
    phase: PhaseSchema.optional(),
    displayName: z.string().optional(),
    desiredState: DesiredStateSchema.optional(),
    autostartPolicy: AutostartPolicySchema.optional(),
    playerCountUnknown: z.boolean().optional(),
    autoRestarts: int32.optional(),
    startGaveUp: z.boolean().optional(),
    retiring: RetiringSchema.optional(),
    /** A server shared with the caller by its owner (issue 42): `owned` stays false. */
    member: z.literal(true).optional(),
    /** A member's permissions on it. */
    permissions: z.array(z.enum(MEMBER_PERMISSIONS)).optional(),
  })
  .openapi('MyServerView');
export type MyServerView = z.infer<typeof MyServerViewSchema>;

export const ServerNameParam = z.object({
  name: z
    .string()
    .regex(SERVER_NAME_PATTERN, 'must be a server name')
    .openapi({ param: { name: 'name', in: 'path' }, example: 'survival' }),
});

/** The same name where the original names its refusal: 400 `bad_name` rather than `bad_request`. */
export const CodedServerNameParam = z.object({
  name: z
    .string()
    .refine((v) => SERVER_NAME_PATTERN.test(v), refusedAs('bad_name', 'must be a server name'))
    .openapi({ param: { name: 'name', in: 'path' }, example: 'survival' }),
});

export { McUuidSchema } from '../../accounts/index.js';

export const McUuidBody = z.strictObject({ mc_uuid: McUuidSchema });

export const WakeInternalResponse = z
  .object({ name: z.string(), desiredState: z.literal('Running'), phase: PhaseSchema, ready: z.boolean() })
  .openapi('InternalWakeResult');
export const DesiredStateResponse = (state: 'Running' | 'Stopped') =>
  z.object({ name: z.string(), desiredState: z.literal(state) });
export const ClaimResponse = z.object({ name: z.string(), claimed: z.literal(true) }).openapi('ClaimResult');
export const MenuResponse = z
  .object({
    name: z.string(),
    phase: PhaseSchema,
    ready: z.boolean(),
    playersOnline: int32,
    playersMax: int32,
    claimable: z.boolean(),
  })
  .openapi('ServerMenu');
export type ServerMenu = z.infer<typeof MenuResponse>;

export const quantity = (what: string) =>
  z.string().max(32).refine(isQuantity, `must be a ${what} quantity such as 4Gi or 500m`);

export const CreateServerBody = z
  .strictObject({
    name: z.string().regex(SERVER_NAME_PATTERN, 'must be a DNS label of at most 40 characters'),
    subdomain: z.string().regex(SERVER_NAME_PATTERN, 'must be a DNS label of at most 40 characters'),
    display_name: z.string().trim().min(1).max(64).optional(),
    /** The original panel's spelling of display_name (api-extensions: an alias; not both). */
    displayName: z.string().trim().min(1).max(64).optional(),
    image: z.string().min(1).max(512).optional(),
    memory: quantity('memory').optional(),
    storage: quantity('storage').optional(),
    autostart_policy: AutostartPolicySchema.optional(),
    autostartPolicy: AutostartPolicySchema.optional(),
    resources: z
      .strictObject({
        cpu: quantity('cpu').optional(),
        cpu_request: quantity('cpu').optional(),
        cpuRequest: quantity('cpu').optional(),
        memory: quantity('memory').optional(),
        memory_request: quantity('memory').optional(),
        memoryRequest: quantity('memory').optional(),
      })
      .optional(),
  })
  .openapi('CreateServer');
export type CreateServerInput = z.infer<typeof CreateServerBody>;

export const CreateServerResponse = z
  .object({ name: z.string(), subdomain: z.string(), desiredState: z.literal('Stopped') })
  .openapi('CreatedServer');

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
export type PatchServerInput = z.infer<typeof PatchServerBody>;
