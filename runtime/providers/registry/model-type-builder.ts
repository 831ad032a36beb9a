import type { TProperties } from '@sinclair/typebox';
import type { ModelApi } from './model-apis.js';
import type { DiscoveryFamily, ModelAuthScheme, ModelProviderType, ProviderTestMode } from './provider-type.js';
import { apiKeyCredential, baseUrlField, configObject } from './schema-parts.js';

// Most model vendors are "an API key and an optional endpoint override"; this builder fills
// that common shape so the table in model-types.ts lists only what differs per vendor.

export interface ApiKeyModelTypeInput {
  readonly type: string;
  readonly display_name: string;
  readonly description: string;
  /** Default API first. */
  readonly apis: readonly [ModelApi, ...ModelApi[]];
  readonly default_base_url: string;
  readonly setup_url: string;
  readonly api_paths?: Partial<Record<ModelApi, string>>;
  readonly discovery?: DiscoveryFamily;
  readonly auth?: ModelAuthScheme;
  readonly test?: ProviderTestMode;
  readonly credential_required?: boolean;
  /** Vendor-specific config fields beside base_url. */
  readonly config?: TProperties;
}

export function apiKeyModelType(input: ApiKeyModelTypeInput): ModelProviderType {
  const credentialRequired = input.credential_required ?? true;
  return {
    kind: 'model',
    type: input.type,
    display_name: input.display_name,
    description: input.description,
    configuration_schema: configObject({
      base_url: baseUrlField(`Endpoint override; defaults to ${input.default_base_url}.`),
      ...(input.config ?? {}),
    }),
    credential_schema: apiKeyCredential({
      required: credentialRequired,
      description: `${input.display_name} API key.`,
      headers: true,
    }),
    credential_required: credentialRequired,
    setup_url: input.setup_url,
    test: input.test ?? 'probe',
    endpoint_fields: ['base_url'],
    apis: input.apis,
    default_api: input.apis[0],
    default_base_url: input.default_base_url,
    api_paths: input.api_paths ?? {},
    auth: input.auth ?? 'bearer',
    discovery: input.discovery ?? 'openai-compatible',
  };
}
