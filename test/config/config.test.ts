import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { relyingPartyOf } from '../../src/features/passkeys/relying-party.js';

const run = promisify(execFile);
const env = (vars: Record<string, string | undefined>) => vars as NodeJS.ProcessEnv;

function configError(vars: Record<string, string | undefined>): string {
  try {
    loadConfig(env(vars));
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(vars)}`);
}

describe('loadConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'felis-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has the defaults of DESIGN.md', () => {
    const config = loadConfig(env({}));
    expect(config).toMatchObject({
      externalPort: 8080,
      internalPort: 8081,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './data',
      serviceTokens: {},
      rootDomain: 'localhost',
      panelHost: 'panel.localhost',
      consoleHost: 'console.localhost',
      cluster: 'simulated',
      smtpUrl: undefined,
      mailFrom: 'felis@localhost',
      mailTransport: 'log',
      clientIpHeader: undefined,
      localAuth: true,
      webauthnRpId: 'panel.localhost',
      webauthnOrigins: ['http://panel.localhost:8080'],
      setupToken: undefined,
      logLevel: 'info',
    });
    expect(config.sessionSources).toEqual([
      { name: 'mojang', url: 'https://sessionserver.mojang.com', primary: true, profile_url: 'https://api.mojang.com' },
    ]);
  });

  it('serves the panel and the console on .localhost names on the simulated cluster, and on nothing unset on a cluster', () => {
    const local = loadConfig(env({ EXTERNAL_PORT: '9090' }));
    expect(local).toMatchObject({ rootDomain: 'localhost', panelHost: 'panel.localhost', consoleHost: 'console.localhost' });
    // The panel's own host: Chromium refuses `localhost` as the RP ID of http://panel.localhost.
    expect(relyingPartyOf(local)).toEqual({ id: 'panel.localhost', name: 'Felis', origins: ['http://panel.localhost:9090'] });
    const cluster = loadConfig(env({ CLUSTER: 'kubernetes' }));
    expect(cluster).toMatchObject({ rootDomain: undefined, panelHost: undefined, consoleHost: undefined, webauthnOrigins: undefined });
    expect(relyingPartyOf(cluster)).toBeUndefined();
  });

  it('keeps a host that is set, takes an empty one as none, and derives no http origin for a host that is set', () => {
    const some = loadConfig(env({ CONSOLE_HOST: 'admin.felis.example', PANEL_HOST: '' }));
    expect(some).toMatchObject({ rootDomain: 'localhost', panelHost: undefined, consoleHost: 'admin.felis.example', webauthnOrigins: undefined });
    expect(relyingPartyOf(some)?.origins).toEqual(['https://admin.felis.example']);
    const none = loadConfig(env({ ROOT_DOMAIN: '', PANEL_HOST: '', CONSOLE_HOST: '' }));
    expect(none).toMatchObject({ rootDomain: undefined, panelHost: undefined, consoleHost: undefined, webauthnOrigins: undefined });
    expect(loadConfig(env({ WEBAUTHN_ORIGINS: 'https://x.example' })).webauthnOrigins).toEqual(['https://x.example']);
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig(env({ EXTERNAL_PORT: '', INTERNAL_PORT: ' ', DATABASE_URL: '', SERVICE_TOKEN_PROXY: '', CLIENT_IP_HEADER: '' }));
    expect(config.externalPort).toBe(8080);
    expect(config.internalPort).toBe(8081);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.serviceTokens).toEqual({});
  });

  it('reads every variable it documents', () => {
    const config = loadConfig(
      env({
        EXTERNAL_PORT: '9080',
        INTERNAL_PORT: '0',
        HOST: '0.0.0.0',
        DATABASE_URL: 'postgres://u@db:5432/felis',
        DATA_DIR: '/var/lib/felis',
        SERVICE_TOKEN_PROXY: 'p'.repeat(20),
        SERVICE_TOKEN_OPS: 'o'.repeat(20),
        ROOT_DOMAIN: 'Felis.Example',
        PANEL_HOST: 'panel.felis.example',
        CONSOLE_HOST: 'console.felis.example',
        CLUSTER: 'kubernetes',
        KUBE_NAMESPACE: 'games',
        KUBE_CRD_GROUP: 'games.example.org',
        KUBE_GAME_NODE_SELECTOR: 'felis.dev/game=true',
        POD_NAME: 'felis-api-7d9c-abcde',
        SMTP_URL: 'smtp://relay:25',
        MAIL_FROM: 'felis@felis.example',
        CLIENT_IP_HEADER: 'X-Real-IP',
        LOCAL_AUTH: 'off',
        WEBAUTHN_RP_ID: 'felis.example',
        WEBAUTHN_ORIGINS: 'https://panel.felis.example, https://console.felis.example',
        SETUP_TOKEN: 's'.repeat(16),
        LOG_LEVEL: 'debug',
      }),
    );
    expect(config).toMatchObject({
      externalPort: 9080,
      internalPort: 0,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db:5432/felis',
      dataDir: '/var/lib/felis',
      serviceTokens: { proxy: 'p'.repeat(20), ops: 'o'.repeat(20) },
      rootDomain: 'felis.example',
      cluster: 'kubernetes',
      kubeNamespace: 'games',
      kubeCrdGroup: 'games.example.org',
      kubeGameNodeSelector: 'felis.dev/game=true',
      podName: 'felis-api-7d9c-abcde',
      clientIpHeader: 'x-real-ip',
      localAuth: false,
      webauthnOrigins: ['https://panel.felis.example', 'https://console.felis.example'],
      logLevel: 'debug',
    });
  });

  it('names the variable of a bad port', () => {
    for (const value of ['abc', '65536', '-1', '80.5', '0x1F90', '1e3', '8080 8081']) {
      const message = configError({ EXTERNAL_PORT: value });
      expect(message, value).toContain('EXTERNAL_PORT');
      expect(message).toContain('port number');
    }
    expect(configError({ INTERNAL_PORT: '99999' })).toContain('INTERNAL_PORT');
  });

  it('refuses the same port for both faces', () => {
    expect(configError({ EXTERNAL_PORT: '9000', INTERNAL_PORT: '9000' })).toContain('INTERNAL_PORT');
    expect(loadConfig(env({ EXTERNAL_PORT: '0', INTERNAL_PORT: '0' })).internalPort).toBe(0);
  });

  it('names every bad variable at once', () => {
    const message = configError({ CLUSTER: 'k8s', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
    expect(message).toContain('CLUSTER');
    expect(message).toContain('LOG_LEVEL');
    expect(message).toContain('DATABASE_URL');
  });

  it('names a bad CLUSTER, LOCAL_AUTH, host, SMTP_URL, CLIENT_IP_HEADER and short SETUP_TOKEN', () => {
    const cases: Array<[string, string]> = [
      ['CLUSTER', 'k8s'],
      ['LOCAL_AUTH', 'yes'],
      ['ROOT_DOMAIN', 'https://felis.example'],
      ['PANEL_HOST', 'panel.felis.example/path'],
      ['SMTP_URL', 'http://relay'],
      ['CLIENT_IP_HEADER', 'X Real IP'],
      ['TRUSTED_PROXIES', '10.0.0.1,edge.example'],
      ['TRUSTED_PROXIES', '10.0.0.0/33'],
      ['SETUP_TOKEN', 'short'],
      ['KUBE_NAMESPACE', 'Games!'],
      ['KUBE_CRD_GROUP', 'Felis_Dev'],
      ['KUBE_GAME_NODE_SELECTOR', 'a b'],
    ];
    for (const [name, value] of cases) expect(configError({ [name]: value }), name).toContain(`${name}:`);
  });

  it('answers the e-mail door after EMAIL_DOOR_ANSWER_MS (default 1000, 0 off) and names a bad value', () => {
    expect(loadConfig(env({})).emailDoorAnswerMs).toBe(1000);
    expect(loadConfig(env({ EMAIL_DOOR_ANSWER_MS: '0' })).emailDoorAnswerMs).toBe(0);
    for (const value of ['-1', '1.5', 'soon', '30001']) expect(configError({ EMAIL_DOOR_ANSWER_MS: value }), value).toContain('EMAIL_DOOR_ANSWER_MS:');
  });

  it('names SESSION_SOURCES when it is not JSON or not a valid list', () => {
    const bad = [
      '[{',
      '{"name":"mojang"}',
      '[]',
      '[{"name":"a","url":"ftp://x","primary":true}]',
      '[{"name":"a","url":"https://a"}]',
      '[{"name":"a","url":"https://a","primary":true},{"name":"b","url":"https://b","primary":true}]',
      '[{"name":"b","url":"https://b"},{"name":"a","url":"https://a","primary":true}]',
      '[{"name":"a","url":"https://a","primary":true},{"name":"a","url":"https://b"}]',
      '[{"name":"a","url":"https://a","primary":true,"extra":1}]',
    ];
    for (const value of bad) expect(configError({ SESSION_SOURCES: value }), value).toContain('SESSION_SOURCES');
    const good = loadConfig(
      env({
        SESSION_SOURCES:
          '[{"name":"mojang","url":"https://sessionserver.mojang.com","primary":true},{"name":"ely","url":"https://authserver.ely.by","prefix":"ely"}]',
      }),
    );
    expect(good.sessionSources.map((s) => s.name)).toEqual(['mojang', 'ely']);
  });

  it('refuses two callers sharing a token, naming both variables', () => {
    const message = configError({ SERVICE_TOKEN_PROXY: 'same-token-value', SERVICE_TOKEN_OPS: 'same-token-value' });
    expect(message).toContain('SERVICE_TOKEN_OPS');
    expect(message).toContain('SERVICE_TOKEN_PROXY');
  });

  it('refuses a service token with white space inside (no Bearer header can carry it)', () => {
    expect(configError({ SERVICE_TOKEN_PROXY: 'two words' })).toContain('SERVICE_TOKEN_PROXY');
    expect(loadConfig(env({ SERVICE_TOKEN_PROXY: '  padded-token  ' })).serviceTokens).toEqual({ proxy: 'padded-token' });
  });

  it('reads a token from its _FILE variant, trimmed', () => {
    const file = join(dir, 'proxy-token');
    writeFileSync(file, 'token-from-file-123\n');
    expect(loadConfig(env({ SERVICE_TOKEN_PROXY_FILE: file })).serviceTokens).toEqual({ proxy: 'token-from-file-123' });
  });

  it('names the _FILE variable that cannot be read, and refuses both forms at once', () => {
    expect(configError({ SERVICE_TOKEN_BUILD_FILE: join(dir, 'missing') })).toContain('SERVICE_TOKEN_BUILD_FILE');
    const file = join(dir, 'limbo-token');
    writeFileSync(file, 'limbo-file-token');
    expect(configError({ SERVICE_TOKEN_LIMBO_FILE: file, SERVICE_TOKEN_LIMBO: 'x' })).toContain('SERVICE_TOKEN_LIMBO');
  });

  it('refuses a token file that duplicates another token', () => {
    const file = join(dir, 'dup-token');
    writeFileSync(file, 'duplicate-token-1');
    expect(configError({ SERVICE_TOKEN_OPS_FILE: file, SERVICE_TOKEN_PROXY: 'duplicate-token-1' })).toContain('SERVICE_TOKEN_OPS');
  });

  it('stops the process with a message naming the variable', async () => {
    const failure = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env.PATH, INTERNAL_PORT: 'eighty', DATABASE_URL: 'memory:' },
      timeout: 50_000,
    }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failure, 'the process should have failed').toBeDefined();
    expect(failure!.code).not.toBe(0);
    expect(failure!.stderr).toContain('INTERNAL_PORT');
    expect(failure!.stderr).toContain('port number');
  }, 60_000);
});
