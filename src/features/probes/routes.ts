import { z } from '@hono/zod-openapi';
import { createRouter, defineRoute, ErrorEnvelopeSchema } from '../../http/route.js';
import { HealthSchema, ReadySchema } from './schema.js';
import { requireReady } from './service.js';
import { SERVICE_VERSION } from '../../version.js';

const healthz = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the process answers',
    responses: { 200: { description: 'alive', content: { 'application/json': { schema: HealthSchema } } } },
  },
  // Probed every few seconds by each kubelet and load balancer: successful lines are sampled.
  { hotRead: true },
);

/** `/healthz`, served on both faces. */
export function healthRoutes() {
  return createRouter().openapi(healthz, (c) => c.json({ status: 'ok' as const, version: SERVICE_VERSION }, 200));
}

const readyz = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: the database and the cluster answer',
    responses: {
      200: { description: 'ready', content: { 'application/json': { schema: ReadySchema } } },
      503: { description: 'a dependency does not answer', content: { 'application/json': { schema: ErrorEnvelopeSchema } } },
    },
  },
  { hotRead: true },
);

const metrics = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus text exposition of the felis_* collectors',
    responses: { 200: { description: 'metrics', content: { 'text/plain': { schema: z.string() } } } },
  },
);

/** `/readyz` and `/metrics`: internal face only. */
export function internalProbeRoutes() {
  return createRouter()
    .openapi(readyz, async (c) => {
      await requireReady(c.var.deps);
      return c.json({ status: 'ready' as const }, 200);
    })
    .openapi(metrics, async (c) => {
      const { registry } = c.var.deps.metrics;
      return c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType });
    });
}
