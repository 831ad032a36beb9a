import { Type } from '@sinclair/typebox';
import { Id, Timestamp } from '../schemas/index.js';

// Request and response shapes of the provider collections (spec 2.13, DESIGN.md). The
// credential appears only in requests: views carry credential_configured instead.

const Config = Type.Record(Type.String(), Type.Unknown(), { description: "the type's configuration (GET /provider-types/{kind} gives its schema); endpoint overrides are named base_url" });
const Credential = Type.Record(Type.String(), Type.Unknown(), {
  writeOnly: true,
  description: 'write-only secret fields ({"api_key": …}, extra headers in "headers"); encrypted at rest, never returned',
});
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const ProviderView = Type.Object(
  {
    id: Id('provider id (prv_…)'),
    workspace_id: Type.String(),
    kind: Type.Union([Type.Literal('model'), Type.Literal('web'), Type.Literal('environment'), Type.Literal('connector'), Type.Literal('memory')]),
    type: Type.String(),
    name: Type.String(),
    config: Config,
    enabled: Type.Boolean(),
    credential_configured: Type.Boolean({ description: 'whether a credential is stored (the credential itself is never returned)' }),
    created_by_id: Type.Union([Type.String(), Type.Null()]),
    updated_by_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer({ minimum: 1 }),
  },
  { $id: 'Provider' },
);

export const CreateProviderBody = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    name: Name,
    config: Type.Optional(Config),
    credential: Type.Optional(Type.Union([Credential, Type.Null()])),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const UpdateProviderBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(Config),
    credential: Type.Optional(
      Type.Union([Credential, Type.Null()], { description: 'a value replaces the stored credential, null removes it, omission keeps it' }),
    ),
  },
  { additionalProperties: false },
);

export const ProviderTestResult = Type.Union(
  [
    Type.Object({ result: Type.Literal('succeeded') }),
    Type.Object({ result: Type.Literal('failed'), message: Type.String() }),
    Type.Object({ result: Type.Literal('unsupported') }),
  ],
  { $id: 'ProviderTestResult' },
);

export const ProviderParams = Type.Object({ provider_id: Id('provider id') });
