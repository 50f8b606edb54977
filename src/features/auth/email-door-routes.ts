import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, errorAnswer, json, jsonBody } from '../../http/route.js';
import { EmailSchema, setSessionCookie, signInClient, signInRole } from '../accounts/index.js';
import { doorLimit, limited, SignedInSchema } from '../doors/index.js';
import { sendSignInCode, signInMethods, signInWithCode } from './email-door-service.js';

const DateTime = z.iso.datetime({ offset: true });

const options = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/options',
    summary: 'The sign-in methods of an address, passkey first; empty for an unknown address',
    middleware: [doorLimit('options')],
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      200: json(z.object({ methods: z.array(z.enum(['passkey', 'email_otp'])) }), 'methods'),
      403: errorAnswer('local_auth_disabled'),
      ...limited,
    },
  },
);

const emailStart = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/email/start',
    summary: 'Mail a sign-in code; the answer is the same for every address',
    middleware: [doorLimit('email')],
    request: jsonBody(z.strictObject({ email: EmailSchema })),
    responses: {
      202: json(z.object({ sent: z.literal(true), expires_at: DateTime }), 'accepted'),
      403: errorAnswer('local_auth_disabled'),
      502: errorAnswer('mail_undeliverable'),
      503: errorAnswer('mail_unavailable'),
      ...limited,
    },
  },
);

const emailVerify = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/auth/email/verify',
    summary: 'Sign in with a mailed code',
    middleware: [doorLimit('email-verify')],
    request: jsonBody(z.strictObject({ email: EmailSchema, code: z.string().min(1).max(64) })),
    responses: {
      200: json(SignedInSchema, 'signed in; session cookie set'),
      403: errorAnswer('staff_account, local_auth_disabled, or forbidden (player on the console host)'),
      ...limited,
    },
  },
);

/** Sign-in options and the e-mail code door. External face, public. */
export function emailDoorRoutes() {
  return createRouter()
    .openapi(options, async (c) => c.json({ methods: await signInMethods(c.var.deps, c.req.valid('json').email) }, 200))
    .openapi(emailStart, async (c) => {
      const expiresAt = await sendSignInCode(c.var.deps, c.req.valid('json').email, c.var.requestId);
      return c.json({ sent: true as const, expires_at: expiresAt.toISOString() }, 202);
    })
    .openapi(emailVerify, async (c) => {
      const signedIn = await signInWithCode(c.var.deps, c.req.valid('json'), signInClient(c));
      setSessionCookie(c, signedIn.token);
      return c.json({ user_id: signedIn.userId, role: signInRole(signedIn.role) }, 200);
    });
}
