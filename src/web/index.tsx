import { randomBytes } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { Child } from 'hono/jsx';
import { pageUrl, type Config } from '../config.js';
import type { AppEnv } from '../http/env.js';
import { callApi, type ApiAnswer, type ApiFetch } from './api.js';
import { Assets } from './assets.js';
import { Page, type PageFrame, type Viewer } from './layout.js';
import { accountPages } from './pages/account.js';
import { serverPages } from './pages/servers.js';
import { signInPages } from './pages/sign-in.js';
import { staffPages } from './pages/staff.js';

export { type ApiFetch } from './api.js';

/** What every page handler is handed: the API as the visitor, and the page frame to render into. */
export interface Web {
  config: Config;
  assets: Assets;
  api<T = Record<string, unknown>>(c: Context<AppEnv>, method: string, path: string, body?: unknown): Promise<ApiAnswer<T>>;
  /** The signed-in viewer, or a redirect to the sign-in (or the first owner's setup). */
  viewer(c: Context<AppEnv>): Promise<Viewer | Response>;
  render(c: Context<AppEnv>, frame: Omit<PageFrame, 'nonce' | 'assets' | 'onConsole' | 'consoleUrl'>, body: Child, status?: number): Response | Promise<Response>;
  /** After a form's action: back to a page, with a notice. */
  back(c: Context<AppEnv>, to: string, notice: { done?: string; error?: string }): Response;
  /** The API's Set-Cookie answers, passed on to the visitor (sign-in, sign-out). */
  passCookies(c: Context<AppEnv>, answer: ApiAnswer<unknown>): void;
  onConsole(c: Context<AppEnv>): boolean;
  form(c: Context<AppEnv>): Promise<Record<string, string>>;
}

/** The page paths, for the face to route to the pages (everything else stays the API's). */
export const PAGE_PATHS = ['/', '/sign-in', '/setup', '/sign-out', '/servers', '/servers/*', '/account', '/account/*', '/submissions', '/staff', '/staff/*', '/assets/*'];

function hostOf(c: Context<AppEnv>): string {
  const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase();
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
}

/**
 * The Content-Security-Policy of a page: its own scripts by nonce, styles and everything else
 * from its own origin only; the API keeps `default-src 'none'`.
 */
function pagePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * The panel (on PANEL_HOST) and the operator console (on CONSOLE_HOST), server-rendered with
 * Hono's JSX from the answers of the public API, called in-process as the visitor (`fetchApi` is
 * the external face itself): a page knows nothing a client of the API does not.
 */
export function createWeb(options: { config: Config; fetchApi: ApiFetch }): Hono<AppEnv> {
  const { config, fetchApi } = options;
  const assets = new Assets();
  const consoleUrl = config.consoleHost ? pageUrl(config.consoleHost, config.externalPort) : undefined;
  const onConsole = (c: Context<AppEnv>) => config.consoleHost !== undefined && hostOf(c) === config.consoleHost.toLowerCase();

  const web: Web = {
    config,
    assets,
    api: (c, method, path, body) => callApi(c, fetchApi, method, path, body, config.clientIpHeader),
    async viewer(c) {
      const me = await web.api<Viewer>(c, 'GET', '/api/v1/me');
      if (me.ok) return me.body;
      if (me.status === 401) {
        const owner = await web.api<{ owner_bound: boolean }>(c, 'GET', '/api/v1/auth/owner-status');
        if (owner.ok && !owner.body.owner_bound) return c.redirect('/setup', 303);
        return c.redirect(`/sign-in?next=${encodeURIComponent(new URL(c.req.url).pathname)}`, 303);
      }
      return web.render(c, { title: 'Unavailable', notice: { text: me.error?.message ?? 'The service cannot answer now.', error: true } }, <p><a href="/">Try again</a></p>, me.status);
    },
    render(c, frame, body, status = 200) {
      const nonce = randomBytes(16).toString('base64');
      c.header('Content-Security-Policy', pagePolicy(nonce));
      c.header('Cache-Control', 'no-store');
      // The contract's frame rule, set here so the front door sees a dressed answer and keeps the policy.
      c.header('X-Frame-Options', 'DENY');
      const page = <Page frame={{ ...frame, nonce, assets, onConsole: onConsole(c), consoleUrl }}>{body}</Page>;
      return c.html(`<!doctype html>${page.toString()}`, status as 200);
    },
    back(c, to, notice) {
      const url = new URL(to, 'http://x');
      if (notice.done) url.searchParams.set('done', notice.done);
      if (notice.error) url.searchParams.set('error', notice.error);
      return c.redirect(url.pathname + url.search, 303);
    },
    passCookies(c, answer) {
      for (const cookie of answer.setCookies) c.header('Set-Cookie', cookie, { append: true });
    },
    onConsole,
    async form(c) {
      const body = await c.req.parseBody();
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
      return out;
    },
  };

  const app = new Hono<AppEnv>();
  app.get('/assets/:file', (c) => {
    const asset = assets.at(new URL(c.req.url).pathname);
    if (!asset) return c.notFound();
    return c.body(asset.bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': asset.type,
      'Cache-Control': 'public, max-age=31536000, immutable',
      ETag: asset.etag,
    });
  });
  signInPages(app, web);
  serverPages(app, web);
  accountPages(app, web);
  staffPages(app, web);
  return app;
}

/** The notice a page shows after a redirect (`?done=` / `?error=`). */
export function noticeOf(c: Context<AppEnv>): PageFrame['notice'] {
  const done = c.req.query('done');
  const error = c.req.query('error');
  if (error) return { text: error, error: true };
  if (done) return { text: done };
  return undefined;
}
