import { z } from '@hono/zod-openapi';
import type { Queryable } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import { RoleSchema, type UserRow } from '../accounts/index.js';
import type { AccountsParts } from '../accounts/index.js';

export const SetupStateSchema = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    role: RoleSchema,
    email: z.string().optional(),
    email_verified: z.boolean(),
    has_passkey: z.boolean(),
    /** True while the account is in first-run lockdown (no passkey and no verified e-mail yet). */
    setup_required: z.boolean(),
  })
  .openapi('SetupState');

export type SetupState = z.infer<typeof SetupStateSchema>;

/** What setup remains for an account (api-extensions: SetupState). */
export async function setupState(deps: Pick<Deps & AccountsParts, 'passkeys'>, db: Queryable, user: UserRow): Promise<SetupState> {
  const passkeys = deps.passkeys ? await deps.passkeys.count(db, user.id) : 0;
  return {
    user_id: user.id,
    username: user.username,
    role: user.role,
    ...(user.email !== null ? { email: user.email } : {}),
    email_verified: user.emailVerified,
    has_passkey: passkeys > 0,
    setup_required: user.inSetup,
  };
}
