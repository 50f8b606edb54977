import { z } from '@hono/zod-openapi';
import { clientIp } from '../../src/http/client-ip.js';
import { DomainError } from '../../src/lib/errors.js';
import { createRouter, defineRoute, json } from '../../src/http/route.js';

/**
 * Test-only routes that exercise the shared middleware stack before any feature route exists:
 * a service route with a strict JSON body, a public route that fails unexpectedly, a path served
 * under two methods, and an app-tier route (refused while no session authenticator is wired).
 */
/** The fixed headers contract section 9 puts on every answer, as written there (lower-case names). */
export const CONTRACT_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'",
};

export const ECHO_PATH = '/api/v1/fixture/echo';
export const BOOM_PATH = '/api/v1/fixture/boom';
export const MULTI_PATH = '/api/v1/fixture/items/{id}';
export const BOOM_DETAIL = 'fixture secret detail: connection string postgres://u:p@db';

const EchoBody = z.strictObject({ name: z.string().min(1).max(32), count: z.number().int().min(0) });

const echo = defineRoute(
  { tier: 'service', callers: ['proxy'] },
  {
    method: 'post',
    path: ECHO_PATH,
    request: { body: { content: { 'application/json': { schema: EchoBody } } } },
    responses: {
      200: {
        description: 'the body back, with the caller',
        content: { 'application/json': { schema: EchoBody.extend({ caller: z.string() }) } },
      },
    },
  },
);

const boom = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: BOOM_PATH,
    responses: { 200: { description: 'never', content: { 'application/json': { schema: z.object({}) } } } },
  },
);

const Item = z.object({ id: z.string() });
const itemParams = z.object({ id: z.string().regex(/^[a-z0-9-]{1,32}$/) });

const getItem = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: MULTI_PATH,
    request: { params: itemParams },
    responses: { 200: { description: 'an item', content: { 'application/json': { schema: Item } } } },
  },
);

const putItem = defineRoute(
  { tier: 'service', callers: ['limbo', 'ops'] },
  {
    method: 'put',
    path: MULTI_PATH,
    request: {
      params: itemParams,
      body: { content: { 'application/json': { schema: z.strictObject({ label: z.string() }) } } },
    },
    responses: { 200: { description: 'stored', content: { 'application/json': { schema: Item } } } },
  },
);

const me = defineRoute(
  { tier: 'app' },
  {
    method: 'get',
    path: '/api/v1/fixture/me',
    responses: { 200: { description: 'the session user', content: { 'application/json': { schema: z.object({ user_id: z.string() }) } } } },
  },
);

const ip = defineRoute(
  { tier: 'public' },
  {
    method: 'post',
    path: '/api/v1/fixture/ip',
    request: { body: { content: { 'application/json': { schema: z.strictObject({ note: z.string().optional() }) } } } },
    responses: { 200: { description: 'the client address', content: { 'application/json': { schema: z.object({ ip: z.string() }) } } } },
  },
);

export function fixtureRoutes() {
  return createRouter()
    .openapi(echo, (c) => c.json({ ...c.req.valid('json'), caller: c.var.caller ?? '' }, 200))
    .openapi(boom, () => {
      throw new Error(BOOM_DETAIL);
    })
    .openapi(getItem, (c) => c.json({ id: c.req.valid('param').id }, 200))
    .openapi(putItem, (c) => c.json({ id: c.req.valid('param').id }, 200))
    .openapi(me, (c) => c.json({ user_id: c.var.session?.userId ?? '' }, 200))
    .openapi(ip, (c) => c.json({ ip: clientIp(c) }, 200));
}

/** The fixture's route table in the tier-matrix form. */
export const FIXTURE_ROUTES = [
  { method: 'POST', path: '/api/v1/fixture/echo', access: { tier: 'service', callers: ['proxy'] } },
  { method: 'GET', path: '/api/v1/fixture/boom', access: { tier: 'public' } },
  { method: 'GET', path: '/api/v1/fixture/items/a1', access: { tier: 'public' } },
  { method: 'PUT', path: '/api/v1/fixture/items/a1', access: { tier: 'service', callers: ['limbo', 'ops'] } },
  { method: 'GET', path: '/api/v1/fixture/me', access: { tier: 'app' } },
  { method: 'POST', path: '/api/v1/fixture/ip', access: { tier: 'public' } },
] as const;

const probe = <P extends string>(method: 'get' | 'post', path: P) =>
  defineRoute({ tier: 'public' }, { method, path, responses: { 200: json(z.object({}).passthrough(), 'probe') } });

/** Public routes that answer in each way the front door must dress: JSON, a raw Response, an DomainError, a crash, a POST. */
export function frontDoorProbeRoutes() {
  return createRouter()
    .openapi(probe('get', '/t/json'), (c) => c.json({ ok: true }, 200))
    .openapi(
      probe('get', '/t/raw'),
      // A raw Response (as a handler may build one): the typed handlers only know c.json/c.body.
      (() => new Response('raw', { headers: { 'Strict-Transport-Security': 'max-age=1' } })) as never,
    )
    .openapi(probe('get', '/t/throw'), () => {
      throw new DomainError('conflict', 'lost a race');
    })
    .openapi(probe('get', '/t/crash'), () => {
      throw new Error('boom');
    })
    .openapi(probe('post', '/t/post'), (c) => c.json({ posted: true }, 200));
}
