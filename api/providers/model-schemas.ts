import { Type } from '@sinclair/typebox';
import { ModelCharacteristics } from '../../runtime/providers/index.js';
import { Id, Timestamp } from '../schemas/index.js';

// Models are keyed by `key` (spec 2.1): unique in the workspace, immutable, no id.

export const MODEL_KEY_PATTERN = '^[a-z0-9][a-z0-9.-]{0,127}$';
const Key = Type.String({ pattern: MODEL_KEY_PATTERN, description: '1 to 128 of a-z, 0-9, "-" and ".", starting with a letter or digit' });
const Settings = Type.Record(Type.String(), Type.Unknown(), { description: "per-API settings (GET /provider-types/model gives each API's settings_schema)" });
const Characteristics = Type.Partial(ModelCharacteristics, { description: 'as in a discovered model entry (spec 2.12); fields may be left out' });
const DisplayName = Type.String({ maxLength: 200 });
const VendorModel = Type.String({ minLength: 1, maxLength: 256, description: "the vendor's model name" });
const Api = Type.String({ minLength: 1, maxLength: 64, description: "a wire API the provider's type speaks; defaults to the type's default API" });

export const ModelView = Type.Object(
  {
    key: Key,
    workspace_id: Type.String(),
    provider_id: Type.String(),
    model: Type.String(),
    api: Type.String(),
    display_name: Type.String(),
    characteristics: Type.Record(Type.String(), Type.Unknown()),
    settings: Settings,
    enabled: Type.Boolean(),
    created_by_id: Type.Union([Type.String(), Type.Null()]),
    updated_by_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer({ minimum: 1 }),
  },
  { $id: 'Model' },
);

export const CreateModelBody = Type.Object(
  {
    key: Key,
    provider_id: Id('a model provider of this workspace'),
    model: VendorModel,
    api: Type.Optional(Api),
    display_name: Type.Optional(DisplayName),
    characteristics: Type.Optional(Characteristics),
    settings: Type.Optional(Settings),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const UpdateModelBody = Type.Object(
  {
    provider_id: Type.Optional(Id('a model provider of this workspace')),
    model: Type.Optional(VendorModel),
    api: Type.Optional(Api),
    display_name: Type.Optional(DisplayName),
    characteristics: Type.Optional(Characteristics),
    settings: Type.Optional(Settings),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'key is immutable' },
);

export const ModelParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 128 }) });
