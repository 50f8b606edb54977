import { readFileSync } from 'node:fs';
import { z } from 'zod';

export const CALLERS = ['proxy', 'limbo', 'build', 'ops'] as const;
export type Caller = (typeof CALLERS)[number];

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** A `Bearer` token cannot hold white space, so a token that does could never be presented. */
const serviceToken = optionalString.pipe(z.string().regex(/^\S+$/, 'must not contain white space').optional());
// Digits only: z.coerce would read an empty variable as port 0 (a random port) and accept `0x1F90`.
const PORT_MESSAGE = 'must be a port number from 0 to 65535';
const port = (fallback: number) =>
  optionalString
    .pipe(z.string().regex(/^\d{1,5}$/, PORT_MESSAGE).optional())
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().max(65535, PORT_MESSAGE));
const hostName = optionalString.pipe(
  z
    .string()
    .regex(/^[a-z0-9.-]+(:\d+)?$/i, 'must be a bare host name (no scheme or path)')
    .transform((v) => v.toLowerCase())
    .optional(),
);

const sessionSource = z.strictObject({
  name: z.string().regex(/^[a-z0-9_-]{1,32}$/i),
  url: z.url({ protocol: /^https?$/ }),
  primary: z.boolean().optional(),
  prefix: z.string().regex(/^[A-Za-z0-9]{1,8}$/).optional(),
  profile_url: z.url({ protocol: /^https?$/ }).optional(),
});
export type SessionSourceConfig = z.infer<typeof sessionSource>;

const DEFAULT_SESSION_SOURCES: SessionSourceConfig[] = [
  {
    name: 'mojang',
    url: 'https://sessionserver.mojang.com',
    primary: true,
    profile_url: 'https://api.mojang.com',
  },
];

const sessionSources = optionalString.transform((raw, ctx) => {
  if (raw === undefined) return DEFAULT_SESSION_SOURCES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON list of sources' });
    return z.NEVER;
  }
  const result = z.array(sessionSource).min(1).safeParse(parsed);
  if (!result.success) {
    ctx.addIssue({ code: 'custom', message: z.prettifyError(result.error) });
    return z.NEVER;
  }
  const primaries = result.data.filter((s) => s.primary);
  if (primaries.length !== 1 || !result.data[0]?.primary) {
    ctx.addIssue({ code: 'custom', message: 'exactly one source, the first, must be primary' });
    return z.NEVER;
  }
  if (new Set(result.data.map((s) => s.name)).size !== result.data.length) {
    ctx.addIssue({ code: 'custom', message: 'source names must be unique' });
    return z.NEVER;
  }
  return result.data;
});

const envSchema = z.object({
  EXTERNAL_PORT: port(8080),
  INTERNAL_PORT: port(8081),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^(memory:|postgres(ql)?:\/\/.+)$/, 'must be postgres://… or memory:')
      .optional(),
  ),
  DATA_DIR: z.string().min(1).default('./data'),
  SERVICE_TOKEN_PROXY: serviceToken,
  SERVICE_TOKEN_LIMBO: serviceToken,
  SERVICE_TOKEN_BUILD: serviceToken,
  SERVICE_TOKEN_OPS: serviceToken,
  ROOT_DOMAIN: hostName,
  PANEL_HOST: hostName,
  CONSOLE_HOST: hostName,
  CLUSTER: z.enum(['simulated', 'kubernetes']).default('simulated'),
  /** `true`: exactly one replica ever runs, so the embedded database is allowed with CLUSTER=kubernetes or inside a pod. */
  SINGLE_REPLICA: z.enum(['true', 'false']).default('false'),
  KUBE_NAMESPACE: z.string().regex(/^[a-z0-9-]{1,63}$/).default('felis'),
  KUBE_CRD_GROUP: z.string().regex(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/, 'must be a DNS subdomain').default('felis.dev'),
  KUBE_SHARED_WORLD_VOLUMES: z.enum(['on', 'off']).default('off'),
  KUBE_GAME_NODE_SELECTOR: optionalString.pipe(z.string().regex(/^[A-Za-z0-9._/-]+(=[A-Za-z0-9._-]*)?(,[A-Za-z0-9._/-]+(=[A-Za-z0-9._-]*)?)*$/, 'must be a label selector (k=v,…)').optional()),
  POD_NAME: optionalString.pipe(z.string().regex(/^[a-z0-9.-]{1,253}$/).optional()),
  SMTP_URL: optionalString.pipe(z.url({ protocol: /^smtps?$/ }).optional()),
  MAIL_FROM: optionalString,
  MAIL_TRANSPORT: optionalString.pipe(z.enum(['smtp', 'log', 'none']).optional()),
  SESSION_SOURCES: sessionSources,
  /** Per-source time-out of one hasJoined (or profile-by-name) request, in milliseconds. */
  SESSION_SOURCE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(5000),
  CLIENT_IP_HEADER: optionalString.pipe(
    z
      .string()
      .regex(/^[A-Za-z0-9-]+$/, 'must be a header name')
      .transform((v) => v.toLowerCase())
      .optional(),
  ),
  /**
   * The most that a revoke, sign-out, disable or role change made on another replica may take to
   * count on this one while it answers signed-in requests from its cached session checks (0: no
   * cache). On the replica that made it, at once. On PostgreSQL the change arrives through
   * LISTEN/NOTIFY and cached rows are used only while the feed is this fresh; without a feed a
   * row lives this long (src/features/accounts/authenticator.ts, src/db/change-feed.ts).
   */
  SESSION_CACHE_MS: z.coerce.number().int().min(0).max(1000).default(1000),
  /** The head of a request must arrive within this (the contract's 30 s body rule, for headers). */
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(300).default(30),
  /** Connections the external face keeps open at once, and from one peer address (0: no cap). */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(0).max(1_000_000).default(768),
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).max(1_000_000).default(64),
  LOCAL_AUTH: z.enum(['on', 'off']).default('on'),
  /** Every public e-mail code request is answered this long after it arrived, known address or not (0: off). */
  EMAIL_DOOR_ANSWER_MS: z.coerce.number().int().min(0).max(30_000).default(1000),
  WEBAUTHN_RP_ID: optionalString,
  WEBAUTHN_ORIGINS: optionalString.transform((v) =>
    v === undefined ? undefined : v.split(',').map((o) => o.trim()).filter(Boolean),
  ),
  /** Live discoverable passkey sign-ins at once, over every network, and from one network. */
  WEBAUTHN_CHALLENGE_CAP: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  WEBAUTHN_CHALLENGE_CAP_PER_NETWORK: z.coerce.number().int().min(1).max(100_000).default(32),
  SETUP_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  REGISTRY_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  REGISTRY_USERNAME: optionalString,
  REGISTRY_PASSWORD: optionalString,
  DEFAULT_IMAGE: z.string().trim().min(1).default('itzg/minecraft-server:java21'),
  BACKUP_S3_BUCKET: optionalString,
  BACKUP_S3_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  BACKUP_S3_REGION: z.string().min(1).default('us-east-1'),
  BACKUP_S3_ACCESS_KEY_ID: optionalString,
  BACKUP_S3_SECRET_ACCESS_KEY: optionalString,
  BACKUP_S3_PREFIX: optionalString.pipe(z.string().regex(/^[a-z0-9._/-]*$/, 'letters, digits, ._/- only').optional()),
  /** On Kubernetes: the image of world Jobs (this service's own), the Secret with their BACKUP_S3_* keys, their deadline. */
  WORLD_JOB_IMAGE: z.string().trim().min(1).default('ghcr.io/felis/control-plane:4.1.0'),
  WORLD_JOB_STORE_SECRET: z.string().regex(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/, 'must be a Secret name').default('felis-backup-store'),
  WORLD_JOB_DEADLINE_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(6 * 3600),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * The proxy's and the probes' hot reads (by-host, internal status, healthz, readyz) log one line
   * per this many successful answers under 100 ms, and at least one a second (1: every answer).
   * Errors, slow answers and writes are always logged (src/http/access-log.ts).
   */
  LOG_HOT_READS_SAMPLE: z.coerce.number().int().min(1).max(1_000_000).default(100),
  /** Where control-plane database bundles are written (the backup command, pre-migrate and pre-restore dumps). */
  DB_BACKUP_DIR: optionalString,
  /** How many bundles of each label the backup command keeps. */
  DB_BACKUP_KEEP: z.coerce.number().int().min(1).max(1000).default(7),
  /** Scheduled world backups kept per server: the newest N, and the newest of each of the last N days, weeks and months (UTC). */
  BACKUP_KEEP_NEWEST: z.coerce.number().int().min(1).max(1000).default(3),
  BACKUP_KEEP_DAILY: z.coerce.number().int().min(0).max(1000).default(7),
  BACKUP_KEEP_WEEKLY: z.coerce.number().int().min(0).max(1000).default(4),
  BACKUP_KEEP_MONTHLY: z.coerce.number().int().min(0).max(1000).default(12),
  /** How often the schedule round runs, and how late a due run may still start (later: recorded as missed). */
  SCHEDULE_TICK_SECONDS: z.coerce.number().int().min(1).max(300).default(60),
  SCHEDULE_MISS_GRACE_MINUTES: z.coerce.number().int().min(1).max(24 * 60).default(10),
  /** At most this many servers get per-server metric series (players, newest backup); 0: none. */
  METRICS_SERVER_SERIES: z.coerce.number().int().min(0).max(10_000).default(200),
  /** How often each replica reads the fleet's figures kept in the database (backups, builds, reports) for /metrics. */
  METRICS_REFRESH_SECONDS: z.coerce.number().int().min(5).max(3600).default(30),
  /** Networks a webhook endpoint may not point at (CIDRs, comma-separated; `none` for none). */
  WEBHOOK_FORBIDDEN_NETWORKS: z
    .string()
    .default('127.0.0.0/8,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,169.254.0.0/16,100.64.0.0/10,0.0.0.0/8,::1/128,fc00::/7,fe80::/10')
    .transform((v, ctx) => {
      if (v.trim() === 'none') return [];
      const cidrs = v.split(',').map((p) => p.trim()).filter(Boolean);
      for (const cidr of cidrs) {
        if (!z.cidrv4().safeParse(cidr).success && !z.cidrv6().safeParse(cidr).success) {
          ctx.addIssue({ code: 'custom', message: `${cidr} is not a CIDR` });
          return z.NEVER;
        }
      }
      return cidrs;
    }),
});

/** Every variable the service reads at start-up (the README's configuration table lists each). */
export const SETTING_NAMES = Object.keys(envSchema.shape) as ReadonlyArray<keyof typeof envSchema.shape>;

export type Config = ReturnType<typeof toConfig>;

/**
 * The hosts `npm start` serves with nothing set: names every browser and curl resolve to this
 * machine, so that the first owner redeems on the console host and can administer at once.
 */
export const LOCAL_HOSTS = { ROOT_DOMAIN: 'localhost', PANEL_HOST: 'panel.localhost', CONSOLE_HOST: 'console.localhost' } as const;

/**
 * Where a browser reaches the pages of a host: the `.localhost` hosts of the quick start over plain
 * HTTP on the external port, any other host over HTTPS behind the edge.
 */
export function pageUrl(host: string, port: number): string {
  return host.endsWith('.localhost') || host === 'localhost' ? `http://${host}:${port}/` : `https://${host}/`;
}

/**
 * On the simulated cluster (the embedded quick start), a host variable that is absent takes its
 * `LOCAL_HOSTS` name; one set empty means "none". Passkeys then default to the relying party
 * `panel.localhost` and the panel over plain HTTP on the external port (browsers count
 * `http://*.localhost` as a secure context). A cluster's hosts are always set by hand.
 */
function withLocalHosts(env: z.infer<typeof envSchema>, raw: Record<string, string | undefined>): z.infer<typeof envSchema> {
  if (env.CLUSTER !== 'simulated') return env;
  const hosts = { ...env };
  for (const name of ['ROOT_DOMAIN', 'PANEL_HOST', 'CONSOLE_HOST'] as const) {
    if (raw[name] === undefined) hosts[name] = LOCAL_HOSTS[name];
  }
  const defaulted = (name: keyof typeof LOCAL_HOSTS) => hosts[name] === LOCAL_HOSTS[name];
  if (raw.WEBAUTHN_ORIGINS === undefined && raw.WEBAUTHN_RP_ID === undefined && defaulted('PANEL_HOST') && defaulted('CONSOLE_HOST')) {
    // Chromium refuses the relying party `localhost` from `http://panel.localhost`: an RP ID must
    // be the origin's host or a registrable domain above it, and `localhost` is not registrable.
    // The panel's own host is both, so passkeys work on the panel; the console host, which no
    // RP ID can share with the panel here, signs in by e-mail code (a real ROOT_DOMAIN covers both).
    hosts.WEBAUTHN_RP_ID = LOCAL_HOSTS.PANEL_HOST;
    hosts.WEBAUTHN_ORIGINS = [`http://${LOCAL_HOSTS.PANEL_HOST}:${env.EXTERNAL_PORT}`];
  }
  return hosts;
}

function toConfig(env: z.infer<typeof envSchema>, serviceTokens: Partial<Record<Caller, string>>) {
  return {
    externalPort: env.EXTERNAL_PORT,
    internalPort: env.INTERNAL_PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATA_DIR,
    serviceTokens,
    rootDomain: env.ROOT_DOMAIN,
    panelHost: env.PANEL_HOST,
    consoleHost: env.CONSOLE_HOST,
    cluster: env.CLUSTER,
    /** The operator's word that one replica runs: the embedded database is then allowed on Kubernetes. */
    singleReplica: env.SINGLE_REPLICA === 'true',
    kubeNamespace: env.KUBE_NAMESPACE,
    kubeCrdGroup: env.KUBE_CRD_GROUP,
    kubeGameNodeSelector: env.KUBE_GAME_NODE_SELECTOR,
    /** The world volumes are network storage every node mounts: a server's move changes only its placement. */
    kubeSharedWorldVolumes: env.KUBE_SHARED_WORLD_VOLUMES === 'on',
    /** This replica's name in the controller's Lease (the Downward API's pod name; the host name otherwise). */
    podName: env.POD_NAME,
    smtpUrl: env.SMTP_URL,
    mailFrom: env.MAIL_FROM ?? `felis@${env.ROOT_DOMAIN ?? 'localhost'}`,
    /**
     * `smtp` when a relay is set, else `log` (DESIGN.md: the embedded quick start prints mail to the
     * log, and start-up warns about it). `none` is the explicit "no relay": the doors answer
     * mail_unavailable.
     */
    mailTransport: env.MAIL_TRANSPORT ?? (env.SMTP_URL ? 'smtp' : 'log'),
    sessionSources: env.SESSION_SOURCES,
    sessionSourceTimeoutMs: env.SESSION_SOURCE_TIMEOUT_MS,
    clientIpHeader: env.CLIENT_IP_HEADER,
    httpHeadersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    sessionCacheMs: env.SESSION_CACHE_MS,
    httpMaxConnections: env.HTTP_MAX_CONNECTIONS,
    httpMaxConnectionsPerAddress: env.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    localAuth: env.LOCAL_AUTH === 'on',
    emailDoorAnswerMs: env.EMAIL_DOOR_ANSWER_MS,
    webauthnRpId: env.WEBAUTHN_RP_ID,
    webauthnOrigins: env.WEBAUTHN_ORIGINS,
    webauthnChallengeCap: env.WEBAUTHN_CHALLENGE_CAP,
    webauthnChallengeCapPerNetwork: env.WEBAUTHN_CHALLENGE_CAP_PER_NETWORK,
    setupToken: env.SETUP_TOKEN,
    logLevel: env.LOG_LEVEL,
    logHotReadsSample: env.LOG_HOT_READS_SAMPLE,
    registryUrl: env.REGISTRY_URL,
    registryUsername: env.REGISTRY_USERNAME,
    registryPassword: env.REGISTRY_PASSWORD,
    defaultImage: env.DEFAULT_IMAGE,
    dbBackupDir: env.DB_BACKUP_DIR ?? `${env.DATA_DIR.replace(/\/+$/, '')}/db-backups`,
    dbBackupKeep: env.DB_BACKUP_KEEP,
    backupKeep: { newest: env.BACKUP_KEEP_NEWEST, daily: env.BACKUP_KEEP_DAILY, weekly: env.BACKUP_KEEP_WEEKLY, monthly: env.BACKUP_KEEP_MONTHLY },
    scheduleTickSeconds: env.SCHEDULE_TICK_SECONDS,
    scheduleMissGraceMinutes: env.SCHEDULE_MISS_GRACE_MINUTES,
    backupS3Bucket: env.BACKUP_S3_BUCKET,
    backupS3Endpoint: env.BACKUP_S3_ENDPOINT,
    backupS3Region: env.BACKUP_S3_REGION,
    backupS3AccessKeyId: env.BACKUP_S3_ACCESS_KEY_ID,
    backupS3SecretAccessKey: env.BACKUP_S3_SECRET_ACCESS_KEY,
    backupS3Prefix: env.BACKUP_S3_PREFIX,
    worldJobImage: env.WORLD_JOB_IMAGE,
    worldJobStoreSecret: env.WORLD_JOB_STORE_SECRET,
    worldJobDeadlineSeconds: env.WORLD_JOB_DEADLINE_SECONDS,
    metricsServerSeries: env.METRICS_SERVER_SERIES,
    metricsRefreshSeconds: env.METRICS_REFRESH_SECONDS,
    webhookForbiddenNetworks: env.WEBHOOK_FORBIDDEN_NETWORKS,
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `X_FILE` names a file whose trimmed content is the value of `X` (for mounted secrets). */
function resolveFileVariables(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const resolved: Record<string, string | undefined> = { ...env };
  for (const caller of CALLERS) {
    const name = `SERVICE_TOKEN_${caller.toUpperCase()}`;
    const file = env[`${name}_FILE`];
    if (!file) continue;
    if (env[name]) throw new ConfigError(`${name} and ${name}_FILE are both set; set one`);
    try {
      resolved[name] = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`${name}_FILE: cannot read ${file} (${(err as Error).message})`);
    }
  }
  return resolved;
}

/** Parses the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = resolveFileVariables(env);
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  if (parsed.data.EXTERNAL_PORT !== 0 && parsed.data.EXTERNAL_PORT === parsed.data.INTERNAL_PORT) {
    throw new ConfigError('invalid configuration:\n  INTERNAL_PORT: must differ from EXTERNAL_PORT (the faces are separate servers)');
  }
  if (parsed.data.MAIL_TRANSPORT === 'smtp' && !parsed.data.SMTP_URL) {
    throw new ConfigError('invalid configuration:\n  MAIL_TRANSPORT: smtp needs SMTP_URL');
  }
  const tokens: Partial<Record<Caller, string>> = {};
  const seen = new Map<string, Caller>();
  for (const caller of CALLERS) {
    const token = parsed.data[`SERVICE_TOKEN_${caller.toUpperCase()}` as `SERVICE_TOKEN_PROXY`];
    if (!token) continue;
    const other = seen.get(token);
    if (other) {
      throw new ConfigError(
        `invalid configuration:\n  SERVICE_TOKEN_${caller.toUpperCase()}: same value as SERVICE_TOKEN_${other.toUpperCase()}; each caller needs its own token`,
      );
    }
    seen.set(token, caller);
    tokens[caller] = token;
  }
  return toConfig(withLocalHosts(parsed.data, raw), tokens);
}
