import type { DiscoveredModel, ModelCapability } from './discovered-model.js';
import { DiscoveryError } from './discovery-error.js';
import { MAX_PAGES, isRecord, numberField, stringField, type FamilyListing } from './discovery-target.js';
import { characterise } from './model-characteristics.js';
import { joinUrl, requestVendorJson } from './vendor-request.js';

// GET {base}/v1/models with x-api-key and anthropic-version; pages by `after_id = last_id`
// while `has_more`. Newer responses add `max_input_tokens` and a `capabilities` object of
// `{supported: boolean}` entries, read when present.

export const ANTHROPIC_VERSION = '2023-06-01';

function supported(capabilities: Record<string, unknown>, key: string): boolean | undefined {
  const entry = capabilities[key];
  return isRecord(entry) && typeof entry['supported'] === 'boolean' ? entry['supported'] : undefined;
}

function reportedCapabilities(entry: Record<string, unknown>): Partial<Record<ModelCapability, boolean>> {
  const caps = entry['capabilities'];
  if (!isRecord(caps)) return {};
  const out: Partial<Record<ModelCapability, boolean>> = {};
  const pairs: [ModelCapability, string][] = [
    ['image_input', 'image_input'],
    ['pdf_input', 'pdf_input'],
    ['structured_output', 'structured_outputs'],
    ['reasoning', 'thinking'],
  ];
  for (const [cap, key] of pairs) {
    const value = supported(caps, key);
    if (value !== undefined) out[cap] = value;
  }
  return out;
}

export async function listAnthropic(listing: FamilyListing): Promise<DiscoveredModel[]> {
  const headers: Record<string, string> = { ...listing.headers, 'anthropic-version': ANTHROPIC_VERSION };
  if (listing.api_key !== undefined) headers['x-api-key'] = listing.api_key;
  const models = new Map<string, DiscoveredModel>();
  let afterId: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = joinUrl(listing.base_url, '/v1/models', { limit: '1000', after_id: afterId });
    const body = await requestVendorJson({ url, headers, secrets: listing.secrets }, listing.options);
    if (!isRecord(body) || !Array.isArray(body['data'])) {
      throw new DiscoveryError('protocol_error', `${url.origin}${url.pathname} did not answer a model list`);
    }
    for (const entry of body['data']) {
      if (!isRecord(entry)) continue;
      const id = stringField(entry, 'id');
      if (id === undefined || models.has(id)) continue;
      models.set(id, {
        slug: id,
        display_name: stringField(entry, 'display_name') ?? id,
        characteristics: characterise(listing.index, id, {
          context_window_tokens: numberField(entry, 'max_input_tokens'),
          capabilities: reportedCapabilities(entry),
          image_profile: 'anthropic',
        }),
      });
    }
    const lastId = stringField(body, 'last_id');
    if (body['has_more'] !== true || lastId === undefined || lastId === afterId) break;
    afterId = lastId;
  }
  return [...models.values()];
}
