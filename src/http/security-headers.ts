import { createMiddleware } from 'hono/factory';

/** Contract section 9; set after the handler so error and 404 answers carry them too. */
export const securityHeaders = createMiddleware(async (c, next) => {
  await next();
  const h = c.res.headers;
  h.set('X-Content-Type-Options', 'nosniff');
  h.set('X-Frame-Options', 'DENY');
  h.set('Referrer-Policy', 'no-referrer');
  h.set('Content-Security-Policy', "default-src 'none'");
  // HSTS only for requests that came through the TLS edge: a plain-HTTP answer must not pin hosts.
  if (c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https') {
    h.set('Strict-Transport-Security', 'max-age=63072000; includeSubDomains');
  } else {
    h.delete('Strict-Transport-Security');
  }
});
