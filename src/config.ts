export interface Config {
  port: number;
  host: string;
  dataDir: string;
  secretKey?: string;
  /** Keys retired by rotations, comma-separated (with CONFIG_SECRET_KEY; else DATA_DIR/secret.key.retired). */
  retiredSecretKeys?: string;
  /** The key that signs the log's checkpoints (C2SP signer key text; else DATA_DIR/log-signing.key). */
  logSigningKey?: string;
  /** PmaControl's crypt.config.php (or a file holding its CRYPT_KEY), to open its ciphertexts. */
  pmacontrolCryptKeyFile?: string;
  /** PmaControl's own database, whose tables the service keeps equal to the configuration. */
  pmacontrol?: { url: string; leaseMs: number; driftMs: number };
  logLevel: string;
  eventStore: 'sqlite' | 'mariadb' | 'eventstoredb';
  eventStoreConnectionString?: string;
  mariadb?: MariadbConfig;
  /** How often an instance looks for appends made by other instances (SQLite store), in ms. */
  pollMs: number;
  http: HttpLimits;
  access: AccessSettings;
  /** How long a stopping instance goes on serving, not ready, before it closes (SIGTERM). */
  shutdownDrainMs: number;
  /** How long an instance may be behind what other instances appended and still be ready. */
  readyMaxLagMs: number;
  webhooks: WebhookSettings;
}

/** How event rules deliver (section 15). */
export interface WebhookSettings {
  /** Host patterns (`hooks.lan`, `*.lan`, `10.0.0.5`) a target may name even where it resolves to a private address. */
  allowedHosts: string[];
  timeoutMs: number;
  /** How long a delivery is retried before it is `dead`. */
  giveUpAfterMs: number;
  /** POSTs of one rule in flight at once: 1 keeps the receiver's order strictly that of the log. */
  inFlight: number;
}

const DURATION = /^([0-9]{1,9})(ms|s|m|h|d)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration (`24h`, `10m`, `30s`, `500ms`, or milliseconds), within bounds. */
function duration(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = DURATION.exec(raw.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] ?? 'ms'] : Number.NaN;
  if (!(ms >= min && ms <= max)) {
    throw new ConfigError(`${name} must be a duration such as 24h, 10m, 30s or 500ms, from ${min} ms to ${max} ms`);
  }
  return ms;
}

function webhookSettings(env: NodeJS.ProcessEnv): WebhookSettings {
  const such = 'host names or addresses such as hooks.lan, *.lan or 10.0.0.5';
  const allowedHosts = hostPatterns(env, 'WEBHOOK_ALLOWED_HOSTS', such);
  return {
    allowedHosts: allowedHosts.map((name) => name.toLowerCase()),
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 5000, 100, 600_000),
    giveUpAfterMs: duration(env, 'WEBHOOK_GIVE_UP_AFTER', 86_400_000, 1000, 30 * 86_400_000),
    inFlight: integer(env, 'WEBHOOK_IN_FLIGHT', 1, 1, 256),
  };
}

/** EVENT_STORE=mariadb: where the log is and how to reach it. */
export interface MariadbConfig {
  url: string;
  poolSize: number;
  tls: boolean;
  caFile?: string;
  /** Following other instances: 20 ms after appends were found, backing off to this when idle. */
  pollMaxMs: number;
  /** The longest one statement may take: a frozen server is answered 503 after this, not waited for. */
  queryTimeoutMs: number;
}

function mariadbConfig(env: NodeJS.ProcessEnv): MariadbConfig {
  const url = env.MARIADB_URL || '';
  if (!/^(mysql|mariadb):\/\/[^/]+\/[^/?#]+/.test(url)) {
    throw new ConfigError(
      'EVENT_STORE=mariadb needs MARIADB_URL=mysql://user:password@host:port/database (mariadb:// is accepted)',
    );
  }
  const tls = env.MARIADB_TLS || 'off';
  if (tls !== 'on' && tls !== 'off') throw new ConfigError('MARIADB_TLS must be on or off');
  return {
    url,
    poolSize: integer(env, 'MARIADB_POOL_SIZE', 10, 1, 1000),
    tls: tls === 'on',
    caFile: env.MARIADB_CA_FILE || undefined,
    pollMaxMs: integer(env, 'MARIADB_POLL_MAX_MS', 500, 20, 60_000),
    queryTimeoutMs: integer(env, 'MARIADB_QUERY_TIMEOUT_MS', 5000, 100, 600_000),
  };
}

/** Who may do what without a token, and which web origins may call the API. */
export interface AccessSettings {
  /** The role of a request without Authorization. */
  anonymousRole: 'none' | 'reader' | 'writer';
  /** Origins allowed to call the API from a browser (CORS); empty: CORS off. */
  corsOrigins: string[];
  /** Host names answered besides the defaults (see http/hosts.ts); `*.example.net` allowed. */
  allowedHosts?: string[];
}

/** What protects the service from slow and idle clients (see docs/configuration.md). */
export interface HttpLimits {
  /** Connections served at once; more are closed as they arrive. */
  maxConnections: number;
  /** Time for a client to send the request's headers, idle connections included. */
  headersTimeoutMs: number;
  /** Time for a client to send the whole request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
  /** Connections one client address may hold at once; more are closed as they arrive. */
  maxConnectionsPerClient: number;
  /** Live feed clients at once (each holds a connection); more get 503 until one leaves. */
  maxSubscribers: number;
  /** Bytes a live feed client may leave unread before it is cut off (it resumes with Last-Event-ID). */
  feedMaxBufferBytes: number;
  /** How often the live feed sends a comment while nothing happens (and checks that its client reads). */
  feedKeepAliveMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not "${raw}"`);
  return value;
}

const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|localhost)$/;

/**
 * ANONYMOUS_ROLE: `writer` by default when the service listens on a loopback address only (its local
 * clients send no credentials), `reader` otherwise. CORS_ORIGINS: comma-separated origins.
 * ALLOWED_HOSTS: comma-separated host names answered besides the defaults.
 */
function accessSettings(env: NodeJS.ProcessEnv, host: string): AccessSettings {
  const fallback = LOOPBACK.test(host) ? 'writer' : 'reader';
  const anonymousRole = (env.ANONYMOUS_ROLE || fallback) as AccessSettings['anonymousRole'];
  if (!['none', 'reader', 'writer'].includes(anonymousRole)) {
    throw new ConfigError(`ANONYMOUS_ROLE must be none, reader or writer, not "${anonymousRole}"`);
  }
  const corsOrigins = list(env.CORS_ORIGINS);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(`CORS_ORIGINS must list origins such as https://console.example.net, not "${origin}"`);
    }
  }
  const allowedHosts = hostPatterns(env, 'ALLOWED_HOSTS', 'host names such as config.example.net or *.example.net');
  return { anonymousRole, corsOrigins, allowedHosts };
}

/** A list of host patterns (`hooks.lan`, `*.lan`, an address, `[::1]`), checked, brackets taken off. */
function hostPatterns(env: NodeJS.ProcessEnv, variable: string, such: string): string[] {
  const patterns = list(env[variable]);
  for (const name of patterns) {
    if (!/^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$|^\[?[0-9A-Fa-f:.]+\]?$/.test(name)) {
      throw new ConfigError(`${variable} must list ${such}, not "${name}"`);
    }
  }
  return patterns.map((name) => name.replace(/^\[|\]$/g, ''));
}

/** Whether a host name (lower case) is one a pattern names: the name itself, or `*.domain` any name below it. */
export function hostMatches(pattern: string, name: string): boolean {
  const lower = pattern.toLowerCase();
  if (!lower.startsWith('*.')) return name === lower;
  const suffix = lower.slice(1);
  return name.endsWith(suffix) && name.length > suffix.length;
}

/** A comma-separated list, trimmed, without empty items. */
const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/**
 * The connection limits. By default a client address may hold half the connections and the live
 * feed a quarter; the feed must leave connections for everything else (health checks, requests).
 */
function httpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const maxConnections = integer(env, 'MAX_CONNECTIONS', 512, 2, 100_000);
  const http: HttpLimits = {
    maxConnections,
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    maxConnectionsPerClient: integer(env, 'MAX_CONNECTIONS_PER_CLIENT', Math.ceil(maxConnections / 2), 1, 100_000),
    maxSubscribers: integer(env, 'MAX_SUBSCRIBERS', Math.floor(maxConnections / 4), 0, 100_000),
    feedMaxBufferBytes: integer(env, 'FEED_MAX_BUFFER_BYTES', 1024 * 1024, 16 * 1024, 1024 * 1024 * 1024),
    feedKeepAliveMs: integer(env, 'FEED_KEEP_ALIVE_MS', 15_000, 100, 15_000),
  };
  if (http.maxSubscribers >= maxConnections) {
    throw new ConfigError(
      `MAX_SUBSCRIBERS (${http.maxSubscribers}) must be below MAX_CONNECTIONS (${maxConnections}): ` +
        'the live feed must leave connections for health checks and ordinary requests',
    );
  }
  return http;
}

/** Reads and checks the environment once, at start; a bad value stops the start with a clear message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LEVELS.join(', ')}`);
  const eventStore = (env.EVENT_STORE || 'sqlite') as Config['eventStore'];
  if (eventStore !== 'sqlite' && eventStore !== 'mariadb' && eventStore !== 'eventstoredb')
    throw new ConfigError('EVENT_STORE must be sqlite, mariadb or eventstoredb');
  const eventStoreConnectionString = env.EVENTSTORE_CONNECTION_STRING || undefined;
  if (eventStore === 'eventstoredb' && !eventStoreConnectionString) {
    throw new ConfigError(
      'EVENT_STORE=eventstoredb needs EVENTSTORE_CONNECTION_STRING (e.g. esdb://localhost:2113?tls=false)',
    );
  }
  if (eventStore === 'eventstoredb' && !env.CONFIG_SECRET_KEY) {
    // Instances on other machines must decrypt what this one sealed: a key generated here would not be shared.
    throw new ConfigError('EVENT_STORE=eventstoredb needs CONFIG_SECRET_KEY, the same on every instance');
  }
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: env.DATA_DIR || './data',
    secretKey: env.CONFIG_SECRET_KEY || undefined,
    retiredSecretKeys: env.CONFIG_RETIRED_SECRET_KEYS || undefined,
    logSigningKey: env.CONFIG_LOG_SIGNING_KEY || undefined,
    pmacontrolCryptKeyFile: env.PMACONTROL_CRYPT_KEY_FILE || undefined,
    ...(env.PMACONTROL_DB_URL
      ? {
          pmacontrol: {
            url: env.PMACONTROL_DB_URL,
            leaseMs: integer(env, 'PMACONTROL_LEASE_MS', 10_000, 1000, 600_000),
            driftMs: integer(env, 'PMACONTROL_DRIFT_INTERVAL_MS', 300_000, 0, 86_400_000),
          },
        }
      : {}),
    logLevel,
    eventStore,
    eventStoreConnectionString,
    ...(eventStore === 'mariadb' ? { mariadb: mariadbConfig(env) } : {}),
    pollMs: integer(env, 'POLL_INTERVAL_MS', 100, 10, 60_000),
    access: accessSettings(env, env.HOST || '127.0.0.1'),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 5000, 0, 600_000),
    readyMaxLagMs: integer(env, 'READY_MAX_LAG_MS', 2000, 0, 3_600_000),
    http: httpLimits(env),
    webhooks: webhookSettings(env),
  };
}
