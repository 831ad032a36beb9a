import type { TSchema } from '@sinclair/typebox';
import { MODEL_API_SETTINGS } from './model-api-settings.js';
import type { ModelApi } from './model-apis.js';
import type {
  ConnectorTransport,
  EnvironmentSupport,
  MemoryHosting,
  ProviderTestMode,
  ProviderType,
  WebOperation,
} from './provider-type.js';

// The JSON view of an installed type served by GET /provider-types/{kind} (spec 4, row 23).

/** A plain JSON Schema object (TypeBox's symbol-keyed metadata removed). */
export type JsonSchema = { readonly [key: string]: unknown };

export interface ModelApiDescription {
  readonly id: ModelApi;
  readonly settings_schema: JsonSchema;
}

export interface ProviderTypeDescription {
  readonly kind: ProviderType['kind'];
  readonly type: string;
  readonly display_name: string;
  readonly description: string;
  readonly configuration_schema: JsonSchema;
  readonly credential_schema: JsonSchema;
  readonly credential_required: boolean;
  readonly setup_url: string | null;
  readonly test: ProviderTestMode;
  readonly endpoint_fields: readonly string[];
  // model
  readonly apis?: readonly ModelApiDescription[];
  readonly default_api?: ModelApi;
  readonly default_base_url?: string | null;
  // web
  readonly operations?: readonly WebOperation[];
  // environment
  readonly environment_schema?: JsonSchema;
  readonly supports?: EnvironmentSupport;
  readonly development_only?: boolean;
  // connector
  readonly transports?: readonly ConnectorTransport[];
  // memory
  readonly hosting?: MemoryHosting;
}

/** TypeBox schemas are JSON Schema plus symbol keys; a JSON round trip drops the symbols. */
export function toJsonSchema(schema: TSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

export function describeProviderType(descriptor: ProviderType): ProviderTypeDescription {
  const common = {
    kind: descriptor.kind,
    type: descriptor.type,
    display_name: descriptor.display_name,
    description: descriptor.description,
    configuration_schema: toJsonSchema(descriptor.configuration_schema),
    credential_schema: toJsonSchema(descriptor.credential_schema),
    credential_required: descriptor.credential_required,
    setup_url: descriptor.setup_url,
    test: descriptor.test,
    endpoint_fields: [...descriptor.endpoint_fields],
  };
  switch (descriptor.kind) {
    case 'model':
      return {
        ...common,
        apis: descriptor.apis.map((id) => ({ id, settings_schema: toJsonSchema(MODEL_API_SETTINGS[id]) })),
        default_api: descriptor.default_api,
        default_base_url: descriptor.default_base_url,
      };
    case 'web':
      return { ...common, operations: [...descriptor.operations] };
    case 'environment':
      return {
        ...common,
        environment_schema: toJsonSchema(descriptor.environment_schema),
        supports: { ...descriptor.supports },
        development_only: descriptor.development_only,
      };
    case 'connector':
      return { ...common, transports: [...descriptor.transports] };
    case 'memory':
      return { ...common, hosting: descriptor.hosting };
    default: {
      const unreachable: never = descriptor;
      throw new Error(`unknown provider kind ${String((unreachable as { kind?: unknown }).kind)}`);
    }
  }
}
