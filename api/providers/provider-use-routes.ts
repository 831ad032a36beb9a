import { Type } from '@sinclair/typebox';
import { AppError, type Services } from '../../runtime/index.js';
import {
  DiscoveredModel,
  PROVIDER_KINDS,
  checkEndpoint,
  credentialHeaders,
  credentialString,
  isDiscoveryError,
  isProviderKind,
  listVendorModels,
  probeProvider,
  resolveModelBaseUrl,
  type DiscoveryError,
  type ProviderKind,
  type ProviderRegistry,
} from '../../runtime/providers/index.js';
import { defineRoute, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody } from '../schemas/index.js';
import { decryptCredential, endpointPolicy, refuseDisabled } from './provider-access.js';
import { collectionPath, loadProvider } from './provider-routes.js';
import { ProviderParams, ProviderTestResult } from './provider-schemas.js';

// Routes that use a provider (test, model discovery) and the registry description. Using a
// disabled provider answers 409 disabled (spec 2.13 rule 4).

const disabled = { description: 'the provider is disabled (code disabled)', schema: ErrorBody };

function testRoute(kind: ProviderKind, registryFor: (s: Services) => ProviderRegistry): ApiRouteSpec {
  return defineRoute({
    method: 'POST',
    path: `${collectionPath(kind)}/{provider_id}/test`,
    operationId: `test${kind[0]!.toUpperCase()}${kind.slice(1)}Provider`,
    summary: `Test a ${kind} provider with one inexpensive probe of its stored configuration`,
    description:
      'Result succeeded, failed (with a message) or unsupported, as the type describes (GET /provider-types/{kind}, field test). Model types list the vendor\'s models; docker pings the engine (GET /_ping); mcp sends an initialize request; memory types list one page of an unused namespace. Needs the run permission.',
    tag: 'providers',
    permission: 'run',
    params: ProviderParams,
    responses: { 200: { description: 'the test result', schema: ProviderTestResult }, 404: { description: 'not found', schema: ErrorBody }, 409: disabled },
    handler: async ({ services, workspaceId, params }) => {
      const found = await loadProvider(services, workspaceId, kind, params.provider_id);
      refuseDisabled(found.provider);
      const descriptor = registryFor(services).get(kind, found.provider.type);
      if (!descriptor) return { status: 200, body: { result: 'failed', message: `provider type ${found.provider.type} is not installed in this deployment` } };
      const credential = descriptor.test === 'unsupported' ? null : decryptCredential(services, found.provider, found.credential);
      const result = await probeProvider({ descriptor, config: found.provider.config, credential, policy: endpointPolicy(services) });
      return { status: 200, body: result };
    },
  });
}

/** Discovery failures → API errors (documented in the README, "Providers and models"). */
function discoveryFailure(error: DiscoveryError): AppError {
  const details = { reason: error.code };
  switch (error.code) {
    case 'upstream_unavailable':
      return new AppError('unavailable', error.message, { details });
    case 'unauthenticated':
      return new AppError('conflict', `the vendor rejected the provider's stored credential: ${error.message}`, { details });
    case 'protocol_error':
      return new AppError('conflict', `the provider's endpoint did not answer with a model listing: ${error.message}`, { details });
    case 'unsupported':
      return new AppError('conflict', error.message, { details });
    default: {
      const unreachable: never = error.code;
      return new AppError('internal', `unknown discovery failure ${String(unreachable)}`);
    }
  }
}

function discoveryRoute(registryFor: (s: Services) => ProviderRegistry): ApiRouteSpec {
  return defineRoute({
    method: 'GET',
    path: `${collectionPath('model')}/{provider_id}/models`,
    operationId: 'discoverProviderModels',
    summary: "The models the vendor lists for this provider (spec 2.12 entries)",
    description:
      'Failures: 409 conflict with details.reason unauthenticated (the vendor refused the stored credential), protocol_error (not a listing) or unsupported (the type has no listing); 503 unavailable when the vendor cannot be reached; 409 disabled for a disabled provider.',
    tag: 'providers',
    params: ProviderParams,
    responses: { 200: { description: 'discovered models', schema: Type.Array(DiscoveredModel) }, 404: { description: 'not found', schema: ErrorBody }, 409: disabled, 503: { description: 'the vendor is unreachable', schema: ErrorBody } },
    handler: async ({ services, workspaceId, params }) => {
      const found = await loadProvider(services, workspaceId, 'model', params.provider_id);
      const { provider } = found;
      refuseDisabled(provider);
      const descriptor = registryFor(services).get('model', provider.type);
      if (!descriptor) throw new AppError('conflict', `provider type ${provider.type} is not installed in this deployment`, { details: { reason: 'unsupported' } });
      const resolved = resolveModelBaseUrl(descriptor, provider.config);
      const verdict = resolved === undefined ? undefined : checkEndpoint(resolved, endpointPolicy(services));
      if (verdict && !verdict.ok) throw new AppError('conflict', `config.base_url: ${verdict.reason}`, { details: { reason: 'endpoint_refused', field: 'config.base_url' } });
      const credential = decryptCredential(services, provider, found.credential);
      const baseUrl = provider.config['base_url'];
      try {
        const target = { base_url: typeof baseUrl === 'string' ? baseUrl : undefined, api_key: credentialString(credential, 'api_key'), headers: credentialHeaders(credential), config: provider.config };
        return { status: 200, body: await listVendorModels(descriptor, target) };
      } catch (error) {
        throw isDiscoveryError(error) ? discoveryFailure(error) : error;
      }
    },
  });
}

function providerTypesRoute(registryFor: (s: Services) => ProviderRegistry): ApiRouteSpec {
  return defineRoute({
    method: 'GET',
    path: '/api/v1/provider-types/{kind}',
    operationId: 'listProviderTypes',
    summary: 'The installed provider types of a kind, with their configuration and credential JSON Schemas',
    description: `kind is one of ${PROVIDER_KINDS.join(', ')}; any other kind is 404 not_found (there is no such collection).`,
    tag: 'providers',
    params: Type.Object({ kind: Type.String({ minLength: 1, maxLength: 64 }) }),
    responses: { 200: { description: 'an array of type descriptions', schema: Type.Array(Type.Record(Type.String(), Type.Unknown())) }, 404: { description: 'unknown kind', schema: ErrorBody } },
    handler: async ({ services, params }) => {
      if (!isProviderKind(params.kind)) throw new AppError('not_found', `unknown provider kind; expected one of ${PROVIDER_KINDS.join(', ')}`);
      return { status: 200, body: registryFor(services).describe(params.kind) };
    },
  });
}

export function providerUseRoutes(registryFor: (s: Services) => ProviderRegistry): ApiRouteSpec[] {
  return [...PROVIDER_KINDS.map((kind) => testRoute(kind, registryFor)), discoveryRoute(registryFor), providerTypesRoute(registryFor)];
}
