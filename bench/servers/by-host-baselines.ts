import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import type { Deps } from '../../src/deps.js';
import type { AppEnv } from '../../src/http/env.js';
import type { ServerCache } from '../../src/features/servers/core/cache.js';
import { RouteLog } from '../../src/http/access-log.js';
import { requestHeader } from '../../src/http/request-header.js';
import { requestIdFor } from '../../src/http/request-id.js';
import { answerHeaderWriterOf, presetSecurityHeaders, viaTlsEdge } from '../../src/http/security-headers.js';
import { tokensEqual } from '../../src/lib/secrets.js';
import { BY_HOST_PREFIX } from './by-host-fleet.js';

const BY_HOST_ROUTE = `${BY_HOST_PREFIX}:host`;

/** Baseline: one bare Hono route answering by-host from the cache. */
export function bareHono(cache: ServerCache) {
  return new Hono().get(BY_HOST_ROUTE, (c) => {
    const server = cache.byHost(c.req.param('host'));
    return server ? c.json(server.info) : c.json({ error: { code: 'not_found', message: 'none' } }, 404);
  });
}

/**
 * The bare route plus, written by hand in its one handler, only the work the contract and DESIGN.md
 * require of every answer: the request id, the contract headers, the token check, the host check,
 * the metrics and the log line (no pipeline, no zod, no context variables). It answers the bench's
 * request only (a known host, the proxy's token): the most an implementation could reach here.
 */
export function requiredWorkOnly(deps: Deps, cache: ServerCache) {
  const series = deps.metrics.requests.seriesOf({ face: 'internal', method: 'GET', route: BY_HOST_ROUTE, status: '200' });
  const routeLog = new RouteLog(deps.log, 'internal', BY_HOST_ROUTE);
  const expected = deps.config.serviceTokens.proxy!;
  return new Hono<AppEnv>().get(BY_HOST_ROUTE, (c) => {
    const started = performance.now();
    const requestId = requestIdFor(requestHeader(c, 'x-request-id'));
    const tls = viaTlsEdge(c);
    const writer = answerHeaderWriterOf(c);
    if (writer) writer.dressAnswers(requestId, tls);
    else presetSecurityHeaders(c, requestId, tls);
    const authorization = requestHeader(c, 'authorization');
    const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
    const host = c.req.param('host');
    const server = tokensEqual(token, expected) && host.length <= 255 ? cache.byHost(host) : undefined;
    if (!server || server.reserved) throw new Error('the floor answers by-host for a known host and the proxy token only');
    const res = c.json(server.info, 200);
    const seconds = (performance.now() - started) / 1000;
    series.observe(seconds);
    routeLog.write('GET', {
      path: c.req.path,
      status: 200,
      duration_ms: Math.round(seconds * 1e5) / 100,
      request_id: requestId,
      caller: 'proxy',
      user_id: undefined,
    });
    return res;
  });
}

/** Baseline: a bare node:http server answering by-host from the cache; resolves with its port. */
export function bareNode(cache: ServerCache): Promise<number> {
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const found = url.startsWith(BY_HOST_PREFIX) ? cache.byHost(decodeURIComponent(url.slice(BY_HOST_PREFIX.length))) : undefined;
    res.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(found ? found.info : { error: { code: 'not_found' } }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
