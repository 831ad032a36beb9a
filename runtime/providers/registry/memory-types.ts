import { Type } from '@sinclair/typebox';
import type { MemoryProviderType } from './provider-type.js';
import { apiKeyCredential, baseUrlField, configObject, secretField } from './schema-parts.js';

// The two memory types (spec 2.13): one hosted (mem0), one self-hosted on PostgreSQL. Both
// probe: the test lists one page of a namespace no memory uses.

const mem0: MemoryProviderType = {
  kind: 'memory',
  type: 'mem0',
  display_name: 'Mem0',
  description: 'Hosted Mem0 platform.',
  configuration_schema: configObject({
    base_url: baseUrlField('Endpoint override; defaults to https://api.mem0.ai.'),
    org_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  }),
  credential_schema: apiKeyCredential({ required: true, description: 'Mem0 API key.' }),
  credential_required: true,
  setup_url: 'https://app.mem0.ai/dashboard/api-keys',
  test: 'probe',
  endpoint_fields: ['base_url'],
  hosting: 'hosted',
};

// A PostgreSQL server is not an HTTP endpoint, so the HTTP endpoint policy does not apply to
// `host` (endpoint_fields is empty); the password is the only secret.
const postgres: MemoryProviderType = {
  kind: 'memory',
  type: 'postgres',
  display_name: 'PostgreSQL',
  description: 'Self-hosted memory store in a PostgreSQL database (pgvector when available).',
  configuration_schema: configObject({
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_535, description: 'Defaults to 5432.' })),
    database: Type.String({ minLength: 1, maxLength: 63 }),
    user: Type.String({ minLength: 1, maxLength: 63 }),
    schema: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$', description: 'Defaults to public.' })),
    ssl_mode: Type.Optional(Type.Union([Type.Literal('disable'), Type.Literal('require'), Type.Literal('verify-full')])),
  }),
  credential_schema: Type.Object(
    { password: Type.Optional(secretField('Database password.')) },
    { additionalProperties: false },
  ),
  credential_required: false,
  setup_url: 'https://www.postgresql.org/download/',
  test: 'probe',
  endpoint_fields: [],
  hosting: 'self-hosted',
};

export const MEMORY_PROVIDER_TYPES: readonly MemoryProviderType[] = [mem0, postgres];
