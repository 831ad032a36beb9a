import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import type { EnvironmentProviderType, EnvironmentSupport } from './provider-type.js';
import { apiKeyCredential, baseUrlField, configObject, noCredential, requiredUrlField, secretField } from './schema-parts.js';

// The 7 sandbox environment types, plus `local` when the deployment enables it for
// development (environments.enable_local). Only docker has a provider test (spec 4): it
// pings the engine and creates nothing; every other environment type answers `unsupported`.

const EnvVars = Type.Optional(
  Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }), Type.String({ maxLength: 32_768 }), {
    additionalProperties: false,
    maxProperties: 256,
    description: 'Environment variables set in the sandbox.',
  }),
);
const Workdir = Type.Optional(Type.String({ minLength: 2, maxLength: 1024, pattern: '^/', description: 'Working directory of commands (absolute).' }));
const Cpu = Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 64, description: 'CPU cores.' }));
const MemoryMb = Type.Optional(Type.Integer({ minimum: 128, maximum: 262_144, description: 'Memory in MiB.' }));
const IdleSeconds = (description: string) => Type.Optional(Type.Integer({ minimum: 60, maximum: 604_800, description }));
const Network = Type.Optional(
  Type.Object(
    { enabled: Type.Boolean({ description: 'Whether the container can reach the network at all (false: network mode none).' }) },
    { additionalProperties: false },
  ),
);

/** A working directory confined to /workspace (types that keep nothing elsewhere). */
const WorkspaceWorkdir = Type.Optional(
  Type.String({ pattern: '^/workspace(/(?!\\.\\.?(/|$))[^/]+)*$', maxLength: 1024, description: 'Working directory of commands: /workspace or a folder below it (created with the environment).' }),
);

function environmentSchema(properties: TProperties): TObject {
  return Type.Object({ ...properties, env: EnvVars, workdir: Workdir }, { additionalProperties: false });
}

interface EnvironmentTypeInput {
  readonly type: string;
  readonly display_name: string;
  readonly description: string;
  readonly configuration_schema: TObject;
  readonly credential_schema: TObject;
  readonly credential_required: boolean;
  readonly setup_url: string;
  readonly environment_schema: TObject;
  readonly supports: EnvironmentSupport;
  readonly endpoint_fields?: readonly string[];
}

function environmentType(input: EnvironmentTypeInput): EnvironmentProviderType {
  return {
    kind: 'environment',
    ...input,
    test: input.type === 'docker' ? 'probe' : 'unsupported',
    endpoint_fields: input.endpoint_fields ?? ['base_url'],
    development_only: false,
  };
}

const apiKey = (description: string) => apiKeyCredential({ required: true, description });
const ALL: EnvironmentSupport = { managed_instances: true, stop: true, destroy: true };
const NO_STOP: EnvironmentSupport = { managed_instances: true, stop: false, destroy: true };

export const ENVIRONMENT_PROVIDER_TYPES: readonly EnvironmentProviderType[] = [
  environmentType({
    type: 'docker',
    display_name: 'Docker',
    description: 'Containers on a Docker Engine (local socket or a remote engine over TLS).',
    configuration_schema: configObject({
      socket_path: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Defaults to /var/run/docker.sock.' })),
      base_url: baseUrlField('Remote engine endpoint, e.g. https://docker.internal:2376; the socket is used when absent.'),
      network: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Docker network to attach.' })),
    }),
    credential_schema: Type.Object(
      {
        tls_ca: Type.Optional(secretField('PEM CA certificate of the remote engine.')),
        tls_cert: Type.Optional(secretField('PEM client certificate.')),
        tls_key: Type.Optional(secretField('PEM client key.')),
      },
      { additionalProperties: false },
    ),
    credential_required: false,
    setup_url: 'https://docs.docker.com/engine/install/',
    environment_schema: environmentSchema({
      image: Type.String({ minLength: 1, maxLength: 512, description: 'Image reference, e.g. node:20-bookworm.' }),
      cpu: Cpu,
      memory_mb: MemoryMb,
      network: Network,
    }),
    supports: ALL,
  }),
  environmentType({
    type: 'e2b',
    display_name: 'E2B',
    description: 'E2B cloud sandboxes.',
    configuration_schema: configObject({
      base_url: baseUrlField('Endpoint override; defaults to https://api.e2b.app.'),
      envd_url_template: Type.Optional(
        Type.String({ minLength: 1, maxLength: 512, description: "URL of a sandbox's envd: {sandbox_id} and {domain} are filled in; defaults to https://49983-{sandbox_id}.{domain}." }),
      ),
    }),
    endpoint_fields: ['base_url'],
    credential_schema: apiKey('E2B API key.'),
    credential_required: true,
    setup_url: 'https://e2b.dev/dashboard',
    environment_schema: environmentSchema({
      template: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Sandbox template; defaults to base.' })),
      timeout_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400 })),
      metadata: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 32 })),
    }),
    supports: ALL,
  }),
  environmentType({
    type: 'daytona',
    display_name: 'Daytona',
    description: 'Daytona sandboxes.',
    configuration_schema: configObject({
      base_url: baseUrlField('Endpoint override; defaults to https://app.daytona.io/api.'),
      target: Type.Optional(Type.String({ pattern: '^[a-z]{2,8}$', description: 'Region target, e.g. us or eu.' })),
    }),
    credential_schema: apiKey('Daytona API key.'),
    credential_required: true,
    setup_url: 'https://app.daytona.io/dashboard/keys',
    environment_schema: environmentSchema({
      snapshot: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      image: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
      cpu: Cpu,
      memory_mb: MemoryMb,
      disk_gb: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 })),
      auto_stop_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_080 })),
    }),
    supports: ALL,
  }),
  environmentType({
    type: 'modal',
    display_name: 'Modal',
    description: 'Modal sandboxes.',
    configuration_schema: configObject({
      base_url: baseUrlField('Endpoint override; defaults to https://api.modal.com.'),
      app_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Modal app that owns the sandboxes.' })),
      environment_name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    }),
    credential_schema: Type.Object(
      {
        token_id: Type.String({ minLength: 1, maxLength: 128, description: 'Modal token id.' }),
        token_secret: secretField('Modal token secret.'),
      },
      { additionalProperties: false },
    ),
    credential_required: true,
    setup_url: 'https://modal.com/settings/tokens',
    // Sent over Modal's gRPC API (runtime/providers/environment/modal): image → ImageGetOrCreate
    // (FROM <image>), the rest → the SandboxCreate definition.
    environment_schema: environmentSchema({
      image: Type.String({ minLength: 1, maxLength: 512, description: 'Registry image reference, e.g. python:3.12-slim (built by Modal as FROM <image>).' }),
      cpu: Cpu,
      memory_mb: MemoryMb,
      gpu: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,31}(:[1-8])?$', description: 'GPU type and optional count, e.g. T4 or A100:2.' })),
      timeout_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400, description: 'Lifetime of the sandbox (Modal cannot extend it); defaults to 3600.' })),
      idle_timeout_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400, description: 'Modal terminates the sandbox after this long without activity.' })),
      network: Network,
    }),
    supports: NO_STOP,
  }),
  environmentType({
    type: 'vercel-sandbox',
    display_name: 'Vercel Sandbox',
    description: 'Vercel Sandbox microVMs.',
    configuration_schema: configObject({
      base_url: baseUrlField('Endpoint override; defaults to https://api.vercel.com.'),
      team_id: Type.String({ minLength: 1, maxLength: 128 }),
      project_id: Type.String({ minLength: 1, maxLength: 128 }),
    }),
    credential_schema: apiKey('Vercel access token.'),
    credential_required: true,
    setup_url: 'https://vercel.com/account/settings/tokens',
    environment_schema: environmentSchema({
      runtime: Type.Optional(Type.Union([Type.Literal('node22'), Type.Literal('python3.13')])),
      vcpus: Type.Optional(Type.Integer({ minimum: 1, maximum: 8 })),
      timeout_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 18_000 })),
    }),
    supports: NO_STOP,
  }),
  environmentType({
    type: 'cloudflare-sandbox',
    display_name: 'Cloudflare Sandbox',
    description: 'Cloudflare Sandbox containers behind a Worker the operator deploys.',
    configuration_schema: configObject({
      base_url: requiredUrlField('URL of the deployed sandbox Worker.'),
    }),
    credential_schema: apiKey('Shared secret the Worker expects as a bearer token.'),
    credential_required: true,
    setup_url: 'https://developers.cloudflare.com/sandbox/',
    // The bridge confines commands and files to /workspace and takes no per-sandbox options.
    environment_schema: Type.Object({ env: EnvVars, workdir: WorkspaceWorkdir }, { additionalProperties: false }),
    supports: NO_STOP,
  }),
  environmentType({
    type: 'runloop',
    display_name: 'Runloop',
    description: 'Runloop devboxes.',
    configuration_schema: configObject({ base_url: baseUrlField('Endpoint override; defaults to https://api.runloop.ai.') }),
    credential_schema: apiKey('Runloop API key.'),
    credential_required: true,
    setup_url: 'https://platform.runloop.ai/settings',
    environment_schema: environmentSchema({
      blueprint_name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      snapshot_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      resource_size: Type.Optional(
        Type.Union([Type.Literal('SMALL'), Type.Literal('MEDIUM'), Type.Literal('LARGE'), Type.Literal('X_LARGE')]),
      ),
      idle_stop_seconds: IdleSeconds('Suspend the devbox after this much idle time (launch_parameters.after_idle).'),
      timeout_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400, description: 'Shut down after this long without keep-alive (keep_alive_time_seconds); renew_environments keeps devboxes in use alive.' })),
    }),
    supports: ALL,
  }),
];

/**
 * Commands on the service host itself, each in a bubblewrap sandbox (private network namespace,
 * only the environment's directory writable): installed only when environments.enable_local is
 * set. Where bubblewrap is missing, environments of this type are refused with the reason.
 */
export const LOCAL_ENVIRONMENT_TYPE: EnvironmentProviderType = {
  kind: 'environment',
  type: 'local',
  display_name: 'Local (development)',
  description:
    'Runs commands on the service host in a bubblewrap sandbox: no network, read-only system folders, only the environment directory (mounted at /workspace) writable. For development only.',
  configuration_schema: configObject({}),
  credential_schema: noCredential(),
  credential_required: false,
  setup_url: null,
  test: 'unsupported',
  endpoint_fields: [],
  environment_schema: Type.Object(
    {
      env: EnvVars,
      workdir: WorkspaceWorkdir,
    },
    { additionalProperties: false },
  ),
  supports: { managed_instances: true, stop: true, destroy: true },
  development_only: true,
};
