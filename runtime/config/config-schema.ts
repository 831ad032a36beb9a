import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { DEFAULT_ASSET_MEDIA_TYPES } from './asset-media-types.js';
import { OutboxConfig } from './outbox-policy.js';

// The whole configuration of one process: service.toml, then SVC_* environment overrides,
// then these defaults. Every key is documented in service.toml.example (a test parses that
// file against this schema). Relative paths are resolved against the config file's folder.

const section = <T extends TProperties>(properties: T): TObject<T> =>
  Type.Object(properties, { additionalProperties: false, default: {} });
const int = (dflt: number, min: number, description: string, max?: number) =>
  Type.Integer({ default: dflt, minimum: min, ...(max === undefined ? {} : { maximum: max }), description });
const str = (dflt: string, description: string) => Type.String({ default: dflt, description });
const bool = (dflt: boolean, description: string) => Type.Boolean({ default: dflt, description });

export const ROLES = ['all', 'control', 'worker'] as const;
export type Role = (typeof ROLES)[number];

export const ServiceConfig = Type.Object(
  {
    database: section({
      url: str('', 'PostgreSQL URL; empty starts the embedded PostgreSQL under data/postgres'),
      auto_migrate: bool(true, 'all and control processes migrate at startup under an advisory lock'),
      migration_advisory_lock_timeout: int(60, 1, 'seconds to wait for the migration advisory lock'),
      pool_size: int(10, 1, 'connections per process', 1000),
      background_connections: int(0, 0, "at most this many of a process's connections do a running attempt's background work at once (its step commits, its seal, lease renewals, display-page packing), so that what a client waits on (an inbox POST, a run's start) finds a connection and a PostgreSQL core; 0 = automatic: in roles all and control 1 (favours the first token over runs/s and backlog drain; raise it up to pool_size for throughput or when the database is far), in role worker no bound (its background work is its throughput)", 1000),
      statement_timeout_ms: int(30000, 0, 'server-side statement timeout; 0 disables'),
      prepared_statements: bool(true, 'prepare each parameterized statement once per connection (parsed and planned once, not per execution); false behind a pooler that does not keep them per client, e.g. PgBouncer in transaction mode before 1.21'),
      embedded_directory: str('data/postgres', 'data directory of the embedded PostgreSQL'),
      embedded_port: int(54329, 1, 'port of the embedded PostgreSQL (127.0.0.1 only)', 65535),
    }),
    kv: section({
      url: str('', 'Redis URL; empty uses the in-process bus (role all, one process only)'),
      key_prefix: str('svc:', 'prefix of every key and stream the service writes'),
    }),
    objects: section({
      driver: Type.Union([Type.Literal('directory'), Type.Literal('s3')], { default: 'directory', description: 'object store driver' }),
      directory: str('data/objects', 'root folder of the directory driver'),
      bucket: str('', 'S3 bucket (driver s3)'),
      endpoint: str('', 'S3 endpoint for S3-compatible stores; empty uses AWS'),
      region: str('us-east-1', 'S3 region'),
      force_path_style: bool(false, 'path-style addressing (most S3-compatible stores need it)'),
      access_key_id: str('', 'S3 access key id; empty uses the AWS default credential chain'),
      secret_access_key: str('', 'S3 secret access key'),
      directory_fsync: bool(true, 'directory driver: fsync each object and its folder before a put returns, so objects survive an OS crash or power loss like the PostgreSQL commits that point to them; false keeps only atomicity and process-crash safety (README, "Object store")'),
      inline_checkpoint_max_bytes: int(32768, 0, 'checkpoints up to this size are stored in PostgreSQL with their step commit instead of as objects; 0 keeps every checkpoint an object (needed while workers of a release before migration 0016 still run)', 1048576),
    }),
    encryption: section({
      key_file: str('data/keyring.json', 'key ring file; generated once (mode 0600) when absent'),
    }),
    server: section({
      host: str('127.0.0.1', 'address the HTTP server binds'),
      port: int(8080, 0, 'HTTP port (0 picks a free port)', 65535),
      readiness_timeout: int(2, 1, 'seconds /readyz waits for the schema check before answering 503 database'),
      max_body_bytes: int(1048576, 1024, 'largest JSON request body accepted (413 beyond)'),
      max_upload_bytes: int(5242880, 1024, 'largest binary upload (avatars, packages)'),
      shutdown_grace_seconds: int(10, 0, 'time in-flight requests get to finish at shutdown'),
      public_url: str('', 'external base URL used in links the API returns; empty derives it from host and port'),
      trust_forwarded_for: bool(false, 'take the client address (per-address limits) from the last X-Forwarded-For entry; only behind a proxy that appends it'),
    }),
    assets: section({
      max_bytes: int(104857600, 1024, 'largest asset upload in bytes (413 beyond); streamed to the object store, never held whole'),
      media_types: Type.Array(Type.String({ pattern: '^[a-z0-9.+-]+/[a-z0-9.+-]+$' }), {
        default: [...DEFAULT_ASSET_MEDIA_TYPES],
        description: 'media types assets accept (415 otherwise); the bytes must match the declared type',
      }),
    }),
    control: section({
      scan_seconds: int(5, 1, 'interval of advance_threads and deliver_outbox'),
    }),
    worker: section({
      slots: int(8, 1, 'attempts executed concurrently per worker process', 1024),
      max_attempts: int(3, 1, 'charged attempts before a run fails', 100),
      drain_seconds: int(30, 0, 'time a worker waits at shutdown for attempts to hand off'),
      authority_seconds: int(30, 2, 'attempt lease length and interval of the expire_leases sweep'),
      poll_seconds: int(2, 1, 'claim polling fallback when no NOTIFY arrives'),
      liveness_scan_ms: int(250, 50, 'interval (ms) at which control processes requeue the runs of workers whose database session is gone (a killed worker), without waiting for the lease', 60000),
    }),
    cache: section({
      enabled: bool(true, 'cache credentials and hot resources per process (invalidated over Redis pub/sub; bypassed while Redis is lost)'),
      max_entries: int(10000, 1, 'most entries the per-process read cache holds (least recently used dropped first)'),
      ttl_seconds: int(60, 1, 'longest an entry is served without a change message: the staleness bound if a message is lost unnoticed', 3600),
    }),
    auth: section({
      expiry_scan_seconds: int(300, 1, 'interval of the expire_credentials sweep'),
      session_ttl_seconds: int(1209600, 60, 'lifetime of a login session'),
      mail_link_ttl_seconds: int(3600, 60, 'lifetime of password-reset links'),
      invitation_ttl_seconds: int(604800, 60, 'lifetime of an unaccepted invitation'),
      rate_limit_per_minute: int(1200, 0, 'requests per credential per minute; 0 disables'),
      credential_attempts_per_address: int(30, 0, 'sign-ins, password-reset confirmations and invitation accepts per client address per minute (one budget); 0 disables'),
      credential_attempts_per_account: int(10, 0, 'sign-ins, password-reset confirmations and invitation accepts per account (email address) per minute; 0 disables'),
      password_hash_concurrency: int(1, 1, 'password hashes (scrypt, 128 MiB each, off the event loop) computed at once per process', 64),
      password_hash_queue: int(32, 0, 'password hashes that may wait for a slot; beyond, requests answer 503 unavailable'),
    }),
    environments: section({
      scan_seconds: int(60, 1, 'interval of maintain_environments and renew_environments'),
      renewal_seconds: int(30, 1, 'bound of one sandbox renewal call'),
      enable_local: bool(false, 'offer the local environment type (development only; commands run under bubblewrap)'),
      local_directory: str('data/environments', 'parent folder of local environment directories'),
      local_bwrap: str('bwrap', 'the bubblewrap executable local environments run commands with (Debian package bubblewrap)'),
    }),
    providers: section({
      operation_scan_seconds: int(60, 1, 'interval of recover_connection_operations'),
      allowed_http_origins: Type.Array(Type.String(), { default: [], description: 'plain-HTTP origins allowed for provider, connection and webhook endpoints' }),
    }),
    outbox: OutboxConfig,
    metrics: section({
      enabled: bool(false, 'serve Prometheus metrics'),
      host: str('127.0.0.1', 'address of the metrics listener'),
      port: int(9464, 0, 'port of the metrics listener', 65535),
    }),
    logging: section({
      level: Type.Union(
        ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
        { default: 'info', description: 'log level' },
      ),
    }),
    mail: section({
      smtp_url: str('', 'SMTP URL (smtp:// or smtps://); empty prints mail to the log'),
      from: str('svc-service <no-reply@localhost>', 'sender of identity mail'),
    }),
  },
  { additionalProperties: false },
);

export type ServiceConfig = Static<typeof ServiceConfig>;
