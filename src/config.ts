import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { networkList } from './lib/networks.js';

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
  CLUSTER: z.enum(['simulated', 'kubernetes', 'local']).default('simulated'),
  /**
   * CLUSTER=local: the command that runs one game server, through `sh -c` in the server's folder,
   * with JAVA_MEMORY and SERVER_JAR in its (otherwise clean) environment. Default: java on the jar.
   */
  LOCAL_SERVER_COMMAND: z.string().trim().min(1).default('exec java -Xms"$JAVA_MEMORY" -Xmx"$JAVA_MEMORY" -jar "$SERVER_JAR" nogui'),
  /** CLUSTER=local: the server jar the default command runs (default DATA_DIR/server.jar). */
  LOCAL_SERVER_JAR: optionalString,
  /** CLUSTER=local: the operator accepted the game's EULA; without it a start fails saying so. */
  LOCAL_EULA: z.enum(['true', 'false']).default('false'),
  /** CLUSTER=local: the ports the games (and their RCON) listen on, on 127.0.0.1, `first-last`. */
  LOCAL_PORT_RANGE: z
    .string()
    .regex(/^\d{1,5}-\d{1,5}$/, 'must be first-last')
    .default('25566-25765')
    .transform((v, ctx) => {
      const [first, last] = v.split('-').map(Number) as [number, number];
      if (first < 1024 || last > 65535 || last - first < 1) {
        ctx.addIssue({ code: 'custom', message: 'must be two ports of 1024-65535, the first below the last' });
        return z.NEVER;
      }
      return { first, last };
    }),
  /** CLUSTER=local: each game's own `online-mode` (the listener forwards, it does not authenticate). */
  LOCAL_ONLINE_MODE: z.enum(['on', 'off']).default('on'),
  /** CLUSTER=local: how long a stop waits after `stop` over RCON before a signal, and after the signal before a kill. */
  LOCAL_STOP_GRACE_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  /** CLUSTER=local: a start not answering RCON after this long is a failed start (at most 3 retries). */
  LOCAL_START_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(3600).default(300),
  /** The Minecraft (Java edition) listener's port: a join to `<subdomain>.ROOT_DOMAIN` wakes the server (unset: no listener). */
  GAME_PORT: optionalString.pipe(z.string().regex(/^\d{1,5}$/, PORT_MESSAGE).optional()).transform((v) => (v === undefined ? undefined : Number(v))).pipe(z.number().max(65535).optional()),
  /** The listener's address (default HOST). */
  GAME_HOST: optionalString,
  /** Connections the listener keeps open at once (handshakes, held logins and forwards). */
  GAME_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100_000).default(512),
  /** How long a login to a starting server is held before it is told to rejoin (clients give up at 30 s). */
  GAME_HOLD_SECONDS: z.coerce.number().int().min(0).max(28).default(25),
  /** `true`: exactly one replica ever runs, so the embedded database is allowed with CLUSTER=kubernetes or inside a pod. */
  SINGLE_REPLICA: z.enum(['true', 'false']).default('false'),
  KUBE_NAMESPACE: z.string().regex(/^[a-z0-9-]{1,63}$/).default('felis'),
  KUBE_CRD_GROUP: z.string().regex(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/, 'must be a DNS subdomain').default('felis.dev'),
  KUBE_SHARED_WORLD_VOLUMES: z.enum(['on', 'off']).default('off'),
  /** CLUSTER=kubernetes: the operator accepted the game's EULA for the game pods; without it a start gives up saying so. */
  KUBE_EULA: z.enum(['true', 'false']).default('false'),
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
  /** Requests one API key may make in a minute, counted in the database so that replicas share it (issue 42). */
  API_KEY_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(600),
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
    .default('127.0.0.0/8,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,169.254.0.0/16,100.64.0.0/10,0.0.0.0/8,::/128,::1/128,fc00::/7,fe80::/10,64:ff9b:1::/48')
    .transform((v, ctx) => (v.trim() === 'none' ? [] : networks(v, ctx, false))),
  /**
   * The edge proxies (addresses or CIDRs, comma-separated) whose CLIENT_IP_HEADER is believed: a
   * connection from anyone else is its own visitor (the header ignored, the per-address cap on).
   */
  TRUSTED_PROXIES: optionalString.transform((v, ctx) => (v === undefined ? undefined : networks(v, ctx, true))),
});

/** A comma-separated list of CIDRs (with `addresses`, bare addresses too), each checked. */
function networks(v: string, ctx: z.RefinementCtx, addresses: boolean): string[] {
  const list = v.split(',').map((p) => p.trim()).filter(Boolean);
  for (const network of list) {
    const ok = [z.cidrv4(), z.cidrv6(), ...(addresses ? [z.ipv4(), z.ipv6()] : [])].some((form) => form.safeParse(network).success);
    if (!ok) {
      ctx.addIssue({ code: 'custom', message: `${network} is not ${addresses ? 'an address or ' : ''}a CIDR` });
      return z.NEVER;
    }
  }
  return list;
}

/** Every variable the service reads at start-up (the README's configuration table lists each). */
export const SETTING_NAMES = Object.keys(envSchema.shape) as ReadonlyArray<keyof typeof envSchema.shape>;

export type SettingName = keyof typeof envSchema.shape;

/**
 * One line of meaning for every setting: `.env.example` is written from these and the schema's
 * defaults (`npm run env-example`; test/config/env-example.test.ts fails when the file and this
 * table part). A setting added to the schema without a line here does not compile.
 */
export const SETTING_MEANINGS: { readonly [K in SettingName]: string } = {
  EXTERNAL_PORT: 'port of the external face: the panel and the operator console (browsers, cookie)',
  INTERNAL_PORT: 'port of the internal face: the game proxy, lobby, build Jobs and ops (service tokens); never expose it publicly',
  HOST: 'address both faces listen on (0.0.0.0 in the container image)',
  DATABASE_URL: 'postgres://user:password@host:5432/db for PostgreSQL; unset: the embedded PGlite in DATA_DIR/db; memory: for a throw-away one',
  DATA_DIR: 'folder of the embedded database and the local stores (backups, contexts, simulated cluster); must be writable',
  SERVICE_TOKEN_PROXY: "the game proxy's token (no white space); unset: that caller is refused. SERVICE_TOKEN_PROXY_FILE reads it from a file",
  SERVICE_TOKEN_LIMBO: "the login lobby's token; unset: refused. A _FILE variant reads it from a file",
  SERVICE_TOKEN_BUILD: "the image build Jobs' token; unset: refused. A _FILE variant reads it from a file",
  SERVICE_TOKEN_OPS: "the ops tooling's token; unset: refused. A _FILE variant reads it from a file",
  ROOT_DOMAIN: 'domain under which each server gets <subdomain>.ROOT_DOMAIN; on the simulated cluster localhost when unset, set empty for none',
  PANEL_HOST: 'host of the web panel; on the simulated cluster panel.localhost when unset',
  CONSOLE_HOST: 'host of the operator console (the only host that serves staff routes); on the simulated cluster console.localhost when unset',
  CLUSTER: 'simulated (in-process, the default), local (real game servers as child processes on this machine) or kubernetes (in-cluster config or KUBECONFIG)',
  LOCAL_SERVER_COMMAND: "CLUSTER=local: the game's command line, run by sh -c in the server's folder with a clean environment (JAVA_MEMORY, SERVER_JAR, PATH, HOME, ...)",
  LOCAL_SERVER_JAR: 'CLUSTER=local: the server jar the default command runs; unset: DATA_DIR/server.jar',
  LOCAL_EULA: 'CLUSTER=local: true says the operator accepted the Minecraft EULA (https://aka.ms/MinecraftEULA); without it local starts fail saying so',
  LOCAL_PORT_RANGE: 'CLUSTER=local: ports on 127.0.0.1 for the local games and their RCON, two per running game',
  LOCAL_ONLINE_MODE: "CLUSTER=local: each local game's own online-mode (on: the game checks players with Mojang)",
  LOCAL_STOP_GRACE_SECONDS: 'CLUSTER=local: after stop over RCON (or a TERM), how long before the next step (TERM, then KILL)',
  LOCAL_START_TIMEOUT_SECONDS: 'CLUSTER=local: a start whose RCON has not answered by then is a failed start',
  GAME_PORT: 'the Minecraft (Java) listener: a join to <subdomain>.ROOT_DOMAIN wakes the server and is forwarded to it; needs SERVICE_TOKEN_PROXY; unset: no listener',
  GAME_HOST: "the listener's bind address; unset: HOST",
  GAME_MAX_CONNECTIONS: 'connections the game listener holds at once (at most 16 of them from one address)',
  GAME_HOLD_SECONDS: 'how long a login to a starting server is held before it is told to rejoin',
  SINGLE_REPLICA: 'true: exactly one replica ever runs, so the embedded database is allowed with CLUSTER=kubernetes or inside a pod',
  KUBE_NAMESPACE: 'namespace of the MinecraftServer resources and their workloads',
  KUBE_CRD_GROUP: 'API group of the MinecraftServer custom resource (match deploy/base/crd.yaml)',
  KUBE_EULA: 'CLUSTER=kubernetes: true says the operator accepted the Minecraft EULA (https://aka.ms/MinecraftEULA) for the game pods (their EULA=TRUE); without it starts give up saying so',
  KUBE_SHARED_WORLD_VOLUMES: 'on when world volumes are network storage every node mounts (a move then changes only placement); off: node-local volumes',
  KUBE_GAME_NODE_SELECTOR: 'label selector (k=v,...) of the nodes counted for capacity; unset: every ready, schedulable node',
  POD_NAME: "this replica's name in the leases it holds (the Downward API's pod name in deploy/); unset: the host name",
  SMTP_URL: 'mail relay, smtp://... or smtps://...; unset: mail goes to the log (MAIL_TRANSPORT)',
  MAIL_FROM: 'sender address of the mail the service sends; unset: felis@ROOT_DOMAIN',
  MAIL_TRANSPORT: 'smtp (the default when SMTP_URL is set), log (the default otherwise: codes in the log), none (the e-mail doors answer 503 mail_unavailable)',
  SESSION_SOURCES: 'JSON list, in priority order, of identity sources {name, url, primary?, prefix?, profile_url?}; unset: Mojang only',
  SESSION_SOURCE_TIMEOUT_MS: 'time-out of one request to an identity source, in milliseconds',
  CLIENT_IP_HEADER: "header the edge (ingress, load balancer) sets with the visitor's address; unset: the TCP peer",
  API_KEY_REQUESTS_PER_MINUTE: 'requests one API key may make in a minute (counted in the database, shared by the replicas); past it 429 rate_limited',
  SESSION_CACHE_MS: 'how long, in ms, a sign-out or revoke (of a session or an API key) made on another replica, or a claim, allowlist or link change behind the proxy\'s lobby menus, may take to count here (0: no such cache; at most 1000)',
  HTTP_HEADERS_TIMEOUT_SECONDS: "a request's head must arrive within this many seconds, else 408 and the connection is closed",
  HTTP_MAX_CONNECTIONS: 'connections the external face holds at once (0: no cap); keep it below the descriptor limit',
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: 'connections the external face holds from one visitor address (0: no cap)',
  LOCAL_AUTH: 'off answers 403 local_auth_disabled on the local sign-in doors (password, e-mail code)',
  EMAIL_DOOR_ANSWER_MS: 'every public e-mail code request is answered this long after it arrived, known address or not (0: off)',
  WEBAUTHN_RP_ID: 'passkey relying party ID; unset: derived from the hosts (see README)',
  WEBAUTHN_ORIGINS: 'comma-separated origins allowed for passkeys; unset: https://PANEL_HOST and https://CONSOLE_HOST (http://...:EXTERNAL_PORT on the .localhost defaults)',
  WEBAUTHN_CHALLENGE_CAP: 'live passkey sign-in ceremonies at once over every network (past it: 429 too_many_challenges)',
  WEBAUTHN_CHALLENGE_CAP_PER_NETWORK: 'live passkey sign-in ceremonies at once from one network (an IPv4 host or an IPv6 /48)',
  SETUP_TOKEN: 'first-run owner token (at least 16 characters, one hour, single use); unset: minted and logged on the first start',
  REGISTRY_URL: 'the platform image registry (OCI distribution API); unset: a static registry that owns no image',
  REGISTRY_USERNAME: "user for the registry's token service; unset: anonymous",
  REGISTRY_PASSWORD: "password for the registry's token service",
  DEFAULT_IMAGE: 'game server image seeded as the platform default (and whitelisted) on the first start',
  BACKUP_S3_BUCKET: 'S3-compatible bucket for world backups, exports and upload parts; unset: DATA_DIR/backups',
  BACKUP_S3_ENDPOINT: 'endpoint of an S3-compatible server (path-style); unset: AWS',
  BACKUP_S3_REGION: 'region of the bucket',
  BACKUP_S3_ACCESS_KEY_ID: "access key of the bucket; unset: the AWS SDK's default chain",
  BACKUP_S3_SECRET_ACCESS_KEY: 'secret key of the bucket',
  BACKUP_S3_PREFIX: 'key prefix inside the bucket (letters, digits, ._/-)',
  WORLD_JOB_IMAGE: "on Kubernetes, the image world Jobs run (keep it the Deployment's)",
  WORLD_JOB_STORE_SECRET: 'on Kubernetes, the Secret holding the BACKUP_S3_* keys world Jobs read',
  WORLD_JOB_DEADLINE_SECONDS: 'on Kubernetes, how long a world Job may run before the cluster stops it',
  LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent (JSON lines on stdout)',
  LOG_HOT_READS_SAMPLE: "the proxy's and probes' hot reads and signed-in users' reads log one line per this many successful answers (1: every answer)",
  DB_BACKUP_DIR: 'where database bundles are written (backup command, pre-migrate and pre-restore bundles); unset: DATA_DIR/db-backups',
  DB_BACKUP_KEEP: 'bundles of each label the backup command keeps',
  BACKUP_KEEP_NEWEST: 'scheduled world backups kept per server: the newest N',
  BACKUP_KEEP_DAILY: 'and the newest of each of the last N days (UTC)',
  BACKUP_KEEP_WEEKLY: 'and the newest of each of the last N ISO weeks',
  BACKUP_KEEP_MONTHLY: 'and the newest of each of the last N months',
  SCHEDULE_TICK_SECONDS: 'how often the schedule round runs (on one replica at a time)',
  SCHEDULE_MISS_GRACE_MINUTES: 'how late a due scheduled run may still start; later, it is recorded missed',
  METRICS_SERVER_SERIES: 'at most this many servers get per-server series in /metrics (0: none)',
  METRICS_REFRESH_SECONDS: "how often each replica reads the fleet's figures kept in the database for /metrics",
  WEBHOOK_FORBIDDEN_NETWORKS: 'CIDRs (comma-separated) a webhook endpoint may not resolve to; none allows every address',
  TRUSTED_PROXIES:
    'edge proxies (addresses or CIDRs, comma-separated) whose CLIENT_IP_HEADER is believed; others are capped and limited by their own address. Unset: the header is believed from every peer and the per-address connection cap is off',
};

/**
 * What a setting is when the environment leaves it unset, as the schema gives it (undefined: none,
 * or one derived from another setting, which its meaning says).
 */
export function settingDefault(name: SettingName): string | undefined {
  // The default as written in the schema (before any transform reads it), where it declares one.
  const declared: unknown = z.toJSONSchema(envSchema.shape[name], { io: 'input', unrepresentable: 'any' }).default;
  if (declared !== undefined) return String(declared);
  // A default that a transform makes (the session sources' list): its value, as JSON.
  const parsed = envSchema.shape[name].safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return undefined;
  return typeof parsed.data === 'object' ? JSON.stringify(parsed.data) : String(parsed.data);
}

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
  if (env.CLUSTER === 'kubernetes') return env;
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
    local: {
      command: env.LOCAL_SERVER_COMMAND,
      jar: env.LOCAL_SERVER_JAR ?? `${env.DATA_DIR.replace(/\/+$/, '')}/server.jar`,
      eula: env.LOCAL_EULA === 'true',
      ports: env.LOCAL_PORT_RANGE,
      onlineMode: env.LOCAL_ONLINE_MODE === 'on',
      stopGraceMs: env.LOCAL_STOP_GRACE_SECONDS * 1000,
      startTimeoutMs: env.LOCAL_START_TIMEOUT_SECONDS * 1000,
    },
    game: env.GAME_PORT === undefined
      ? undefined
      : { port: env.GAME_PORT, host: env.GAME_HOST ?? env.HOST, maxConnections: env.GAME_MAX_CONNECTIONS, holdMs: env.GAME_HOLD_SECONDS * 1000 },
    /** The operator's word that one replica runs: the embedded database is then allowed on Kubernetes. */
    singleReplica: env.SINGLE_REPLICA === 'true',
    kubeNamespace: env.KUBE_NAMESPACE,
    kubeCrdGroup: env.KUBE_CRD_GROUP,
    kubeGameNodeSelector: env.KUBE_GAME_NODE_SELECTOR,
    /** The world volumes are network storage every node mounts: a server's move changes only its placement. */
    kubeSharedWorldVolumes: env.KUBE_SHARED_WORLD_VOLUMES === 'on',
    /** KUBE_EULA=true: the operator accepted the game's EULA; the game pods are told so (EULA=TRUE) and only then started. */
    kubeEula: env.KUBE_EULA === 'true',
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
    /** TRUSTED_PROXIES as a block list: the peers whose CLIENT_IP_HEADER is believed (undefined: every peer's). */
    trustedProxies: env.TRUSTED_PROXIES && networkList(env.TRUSTED_PROXIES),
    httpHeadersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
    sessionCacheMs: env.SESSION_CACHE_MS,
    apiKeyRequestsPerMinute: env.API_KEY_REQUESTS_PER_MINUTE,
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
  if (parsed.data.GAME_PORT !== undefined && !parsed.data.SERVICE_TOKEN_PROXY) {
    throw new ConfigError('invalid configuration:\n  GAME_PORT: the game listener asks the internal face as the proxy does; set SERVICE_TOKEN_PROXY');
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
