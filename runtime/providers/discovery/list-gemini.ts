import type { DiscoveredModel } from './discovered-model.js';
import { DiscoveryError } from './discovery-error.js';
import { MAX_PAGES, isRecord, numberField, stringField, type FamilyListing } from './discovery-target.js';
import { characterise } from './model-characteristics.js';
import { joinUrl, requestVendorJson } from './vendor-request.js';

// GET {base}/v1beta/models, the key in the x-goog-api-key header (never ?key=, which would
// put it in URLs that proxies log). Pages by `pageToken = nextPageToken`. Entries are
// `models/<id>` with `inputTokenLimit` (used as the context window), `displayName`,
// `supportedGenerationMethods` (only generateContent models can chat) and `thinking`.

export async function listGemini(listing: FamilyListing): Promise<DiscoveredModel[]> {
  const headers: Record<string, string> = { ...listing.headers };
  if (listing.api_key !== undefined) headers['x-goog-api-key'] = listing.api_key;
  const models = new Map<string, DiscoveredModel>();
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = joinUrl(listing.base_url, '/v1beta/models', { pageSize: '1000', pageToken });
    const body = await requestVendorJson({ url, headers, secrets: listing.secrets }, listing.options);
    if (!isRecord(body)) throw new DiscoveryError('protocol_error', `${url.origin}${url.pathname} did not answer a model list`);
    // An empty account answers `{}`: no `models` key at all.
    const entries = body['models'] ?? [];
    if (!Array.isArray(entries)) throw new DiscoveryError('protocol_error', `${url.origin}${url.pathname} did not answer a model list`);
    for (const entry of entries) {
      if (!isRecord(entry)) continue;
      const name = stringField(entry, 'name');
      if (name === undefined) continue;
      const methods = entry['supportedGenerationMethods'];
      if (Array.isArray(methods) && !methods.includes('generateContent')) continue;
      const slug = name.startsWith('models/') ? name.slice('models/'.length) : name;
      if (models.has(slug)) continue;
      models.set(slug, {
        slug,
        display_name: stringField(entry, 'displayName') ?? slug,
        characteristics: characterise(listing.index, slug, {
          context_window_tokens: numberField(entry, 'inputTokenLimit'),
          capabilities: entry['thinking'] === true ? { reasoning: true } : {},
          image_profile: 'gemini',
        }),
      });
    }
    const next = stringField(body, 'nextPageToken');
    if (next === undefined || next === pageToken) break;
    pageToken = next;
  }
  return [...models.values()];
}
