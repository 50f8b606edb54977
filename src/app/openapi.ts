import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv, Face } from '../http/env.js';
import { SERVICE_VERSION } from '../version.js';


export function openApiDocument(app: OpenAPIHono<AppEnv>, face: Face) {
  if (face === 'internal') {
    app.openAPIRegistry.registerComponent('securitySchemes', 'serviceToken', { type: 'http', scheme: 'bearer' });
  } else {
    app.openAPIRegistry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'svc_session' });
    app.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'felis_…',
      description: 'An API key (POST /api/v1/account/api-keys) on the panel host: app-tier routes only, a `read` key GET only.',
    });
  }
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: `Felis control plane — ${face} face`,
      version: SERVICE_VERSION,
      description:
        face === 'internal'
          ? 'Answers the platform services (proxy, limbo, build, ops) with service tokens.'
          : 'Serves the browser panel and the operator console with the svc_session cookie, and scripts with API keys (Authorization: Bearer felis_…, app tier, panel host).',
    },
  });
}
