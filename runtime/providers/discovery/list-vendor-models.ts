import { resolveModelBaseUrl, type DiscoveryFamily, type ModelProviderType } from '../registry/index.js';
import type { DiscoveredModel } from './discovered-model.js';
import { DiscoveryError, isDiscoveryError } from './discovery-error.js';
import type { DiscoveryTarget, FamilyListing } from './discovery-target.js';
import { listAnthropic } from './list-anthropic.js';
import { listCohere } from './list-cohere.js';
import { listGemini } from './list-gemini.js';
import { listOllama } from './list-ollama.js';
import { listOpenAiCompatible } from './list-openai-compatible.js';
import { buildKnownModelIndex } from './model-characteristics.js';
import { redact, type DiscoveryOptions } from './vendor-request.js';

// GET /model-providers/{id}/models: the vendor's own listing mapped to spec 2.12 entries.
// Callers check base_url against the endpoint policy first (it was checked when stored).

function baseUrlFor(source: ModelProviderType | DiscoveryFamily, target: DiscoveryTarget): string | undefined {
  if (typeof source === 'string') return target.base_url;
  const config = { ...(target.config ?? {}), ...(target.base_url !== undefined ? { base_url: target.base_url } : {}) };
  // OpenAI-style listings live beside the OpenAI API (Vercel's and Ollama's sit under /v1);
  // the other families list from the vendor root.
  const openAiApi = source.apis.find((api) => api === 'openai-chat' || api === 'openai-responses');
  const listsBesideOpenAi = source.discovery === 'openai-compatible' || source.discovery === 'azure-openai';
  return resolveModelBaseUrl(source, config, listsBesideOpenAi ? openAiApi : undefined);
}

function dispatch(family: Exclude<DiscoveryFamily, 'unsupported'>, listing: FamilyListing): Promise<DiscoveredModel[]> {
  switch (family) {
    case 'openai-compatible':
      return listOpenAiCompatible(listing, 'bearer');
    case 'azure-openai':
      return listOpenAiCompatible(listing, 'api-key-header');
    case 'anthropic':
      return listAnthropic(listing);
    case 'gemini':
      return listGemini(listing);
    case 'cohere':
      return listCohere(listing);
    case 'ollama':
      return listOllama(listing);
    default: {
      const unreachable: never = family;
      throw new DiscoveryError('unsupported', `unknown discovery family ${String(unreachable)}`);
    }
  }
}

/**
 * Lists the models a provider offers. `source` is the provider's type descriptor (its
 * default base URL and listing family apply) or a bare family (then `target.base_url` is
 * required). Throws DiscoveryError: `unsupported` (bedrock, vertex, chatgpt login),
 * `unauthenticated` (401/403), `upstream_unavailable`, `protocol_error`.
 */
export async function listVendorModels(
  source: ModelProviderType | DiscoveryFamily,
  target: DiscoveryTarget,
  options: DiscoveryOptions = {},
): Promise<DiscoveredModel[]> {
  const family = typeof source === 'string' ? source : source.discovery;
  const secrets = [
    ...(target.api_key !== undefined ? [target.api_key] : []),
    ...Object.values(target.headers ?? {}),
  ];
  try {
    if (family === 'unsupported') {
      const name = typeof source === 'string' ? 'this provider type' : `provider type ${source.type}`;
      throw new DiscoveryError('unsupported', `${name} has no model listing; add models by name`);
    }
    const base_url = baseUrlFor(source, target);
    if (base_url === undefined) {
      throw new DiscoveryError('protocol_error', 'the provider has no base_url and its type has no default endpoint');
    }
    const listing: FamilyListing = {
      base_url,
      api_key: target.api_key,
      headers: { ...(target.headers ?? {}) },
      secrets,
      options,
      index: buildKnownModelIndex(),
    };
    return await dispatch(family, listing);
  } catch (error) {
    // Last line of defence: whatever built the message, no secret leaves in it.
    if (isDiscoveryError(error)) throw new DiscoveryError(error.code, redact(error.message, secrets));
    throw error;
  }
}
