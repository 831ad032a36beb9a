// Public API of the provider registry: installed types per kind, their JSON description,
// and input validation. Routes (GET /provider-types/{kind}, provider CRUD) live in api/.
export { PROVIDER_KINDS, isProviderKind, type ProviderKind } from './provider-kinds.js';
export { MODEL_APIS, isModelApi, type ModelApi } from './model-apis.js';
export {
  MODEL_API_SETTINGS,
  OpenAiChatSettings,
  OpenAiResponsesSettings,
  AnthropicMessagesSettings,
  GeminiGenerateSettings,
  BedrockConverseSettings,
  CohereChatSettings,
} from './model-api-settings.js';
export {
  PROVIDER_TEST_MODES,
  MODEL_AUTH_SCHEMES,
  DISCOVERY_FAMILIES,
  WEB_OPERATIONS,
  CONNECTOR_TRANSPORTS,
  MEMORY_HOSTINGS,
  type ProviderTestMode,
  type ModelAuthScheme,
  type DiscoveryFamily,
  type ProviderTypeBase,
  type ModelProviderType,
  type WebOperation,
  type WebProviderType,
  type EnvironmentSupport,
  type EnvironmentProviderType,
  type ConnectorTransport,
  type ConnectorProviderType,
  type MemoryHosting,
  type MemoryProviderType,
  type ProviderTypeByKind,
  type ProviderType,
} from './provider-type.js';
export {
  createProviderRegistry,
  type ProviderRegistry,
  type ProviderRegistryOptions,
} from './registry.js';
export {
  describeProviderType,
  toJsonSchema,
  type JsonSchema,
  type ModelApiDescription,
  type ProviderTypeDescription,
} from './describe-provider-type.js';
export { type ProviderInputProblem } from './validate-provider-input.js';
export { resolveModelBaseUrl } from './resolve-model-base-url.js';
export {
  checkEndpoint,
  normaliseHttpOrigin,
  ENDPOINT_REFUSALS,
  type EndpointPolicy,
  type EndpointCheck,
  type EndpointRefusal,
} from '../endpoint-policy.js';
