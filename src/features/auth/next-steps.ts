import type { Config } from '../../config.js';

/**
 * The commands an operator pastes after start-up or after minting an owner token: curl against
 * this machine's external face on the console host, where the owner's session can administer.
 * A `.localhost` console host resolves to this machine by itself (curl and browsers map
 * `*.localhost` to the loopback address); any other is reached on the listening address with its
 * `Host` header. Undefined without a console host: the owner could administer nowhere.
 */
export function consoleCurl(config: Pick<Config, 'consoleHost' | 'host' | 'externalPort'>): { base: string; hostHeader: string } | undefined {
  const host = config.consoleHost;
  if (!host) return undefined;
  const bare = host.replace(/:\d+$/, '');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return { base: `http://${bare}:${config.externalPort}`, hostHeader: '' };
  const address = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return { base: `http://${address}:${config.externalPort}`, hostHeader: ` -H 'Host: ${bare}'` };
}

/**
 * The shell variable the pasted commands keep the session cookie in. Not a curl cookie jar: the
 * cookie is `Secure`, and curl (7.88, Debian 12) keeps a Secure cookie received over plain HTTP
 * only for `localhost` itself, not for `console.localhost`; browsers keep it for both.
 */
export const SESSION_VAR = 'SESSION';

/** Redeems the token; the answer goes to the terminal, the session cookie into `$SESSION`. */
export function redeemCommand(config: Pick<Config, 'consoleHost' | 'host' | 'externalPort'>, token: string): string | undefined {
  const target = consoleCurl(config);
  if (!target) return undefined;
  return (
    `${SESSION_VAR}=$(curl -s -D - -o /dev/stderr${target.hostHeader} -H 'Content-Type: application/json' ` +
    `-d '{"token":"${token}"}' ${target.base}/api/v1/auth/setup/redeem | grep -io 'svc_session=[^;]*')`
  );
}

/** What ends setup lockdown: a verified e-mail address (two commands), or a passkey in a browser. */
export function leaveSetupCommands(config: Pick<Config, 'consoleHost' | 'host' | 'externalPort' | 'mailTransport'>): string[] {
  const target = consoleCurl(config);
  if (!target) return [];
  const post = (path: string, body: string) =>
    `curl -s -b "$${SESSION_VAR}"${target.hostHeader} -H 'Content-Type: application/json' -d '${body}' ${target.base}${path}`;
  return [
    post('/api/v1/account/email/start', '{"email":"you@example.com"}'),
    `${post('/api/v1/account/email/verify', '{"code":"123456"}')}    # the code from ${config.mailTransport === 'log' ? 'the service log' : 'the mail'}`,
  ];
}
