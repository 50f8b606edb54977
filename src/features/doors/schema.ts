import { z } from '@hono/zod-openapi';
import { errorAnswer } from '../../http/route.js';
import { SignInRoleSchema } from '../accounts/index.js';

/** The answer of a door whose per-address limit is spent. */
export const limited = { 429: errorAnswer('rate_limited, with Retry-After') };
/** What a door answers once it set the session cookie. */
export const SignedInSchema = z.object({ user_id: z.uuid(), role: SignInRoleSchema });

/** A door's sign-in: who signed in, and the token the session cookie it sets carries. */
export interface SignedIn {
  userId: string;
  role: string;
  token: string;
}
