import type { DiscoveredModel, ModelCapability } from './discovered-model.js';
import { DiscoveryError } from './discovery-error.js';
import { MAX_PAGES, isRecord, numberField, stringField, type FamilyListing } from './discovery-target.js';
import { characterise } from './model-characteristics.js';
import { joinUrl, requestVendorJson } from './vendor-request.js';

// GET {base}/v1/models?endpoint=chat (Bearer), paged by `page_token = next_page_token`.
// Entries: `name`, `endpoints`, `context_length`, `features` (tools, vision, json_schema…).

const FEATURES: Readonly<Record<string, ModelCapability>> = {
  tools: 'tools',
  strict_tools: 'tools',
  vision: 'image_input',
  json_schema: 'structured_output',
  json_mode: 'structured_output',
  reasoning: 'reasoning',
};

export async function listCohere(listing: FamilyListing): Promise<DiscoveredModel[]> {
  const headers: Record<string, string> = { ...listing.headers };
  if (listing.api_key !== undefined) headers['authorization'] = `Bearer ${listing.api_key}`;
  const models = new Map<string, DiscoveredModel>();
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = joinUrl(listing.base_url, '/v1/models', { endpoint: 'chat', page_size: '1000', page_token: pageToken });
    const body = await requestVendorJson({ url, headers, secrets: listing.secrets }, listing.options);
    if (!isRecord(body) || !Array.isArray(body['models'])) {
      throw new DiscoveryError('protocol_error', `${url.origin}${url.pathname} did not answer a model list`);
    }
    for (const entry of body['models']) {
      if (!isRecord(entry)) continue;
      const name = stringField(entry, 'name');
      if (name === undefined || models.has(name)) continue;
      const endpoints = entry['endpoints'];
      if (Array.isArray(endpoints) && !endpoints.includes('chat')) continue;
      const capabilities: Partial<Record<ModelCapability, boolean>> = {};
      const features = entry['features'];
      if (Array.isArray(features)) {
        for (const feature of features) {
          const cap = typeof feature === 'string' ? FEATURES[feature] : undefined;
          if (cap) capabilities[cap] = true;
        }
      }
      models.set(name, {
        slug: name,
        display_name: name,
        characteristics: characterise(listing.index, name, {
          context_window_tokens: numberField(entry, 'context_length'),
          capabilities,
        }),
      });
    }
    const next = stringField(body, 'next_page_token');
    if (next === undefined || next === pageToken) break;
    pageToken = next;
  }
  return [...models.values()];
}
