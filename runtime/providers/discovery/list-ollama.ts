import type { DiscoveredModel, ModelCapability } from './discovered-model.js';
import { DiscoveryError, isDiscoveryError } from './discovery-error.js';
import { isRecord, numberField, stringField, type FamilyListing } from './discovery-target.js';
import { characterise, type ReportedTraits } from './model-characteristics.js';
import { joinUrl, requestVendorJson } from './vendor-request.js';

// GET {base}/api/tags lists the pulled models, but says nothing about what they can do, so
// each is looked up with POST {base}/api/show: `capabilities` (completion, tools, vision,
// thinking, embedding) and `model_info["<architecture>.context_length"]`. A failed lookup
// only loses the detail; the table and fallbacks still describe the model.

const SHOW_CONCURRENCY = 4;

const OLLAMA_CAPABILITIES: Readonly<Record<string, ModelCapability>> = {
  tools: 'tools',
  vision: 'image_input',
  thinking: 'reasoning',
};

interface ShownModel {
  readonly chat: boolean;
  readonly traits: ReportedTraits;
}

function headersOf(listing: FamilyListing): Record<string, string> {
  const headers: Record<string, string> = { ...listing.headers };
  // Local Ollama takes no key; hosted or proxied instances take a bearer token.
  if (listing.api_key !== undefined) headers['authorization'] = `Bearer ${listing.api_key}`;
  return headers;
}

async function showModel(listing: FamilyListing, name: string): Promise<ShownModel | undefined> {
  let body: unknown;
  try {
    body = await requestVendorJson(
      {
        url: joinUrl(listing.base_url, '/api/show'),
        method: 'POST',
        headers: { ...headersOf(listing), 'content-type': 'application/json' },
        body: JSON.stringify({ model: name }),
        secrets: listing.secrets,
      },
      listing.options,
    );
  } catch (error) {
    if (isDiscoveryError(error)) return undefined;
    throw error;
  }
  if (!isRecord(body)) return undefined;
  const list = Array.isArray(body['capabilities']) ? (body['capabilities'] as unknown[]) : undefined;
  const capabilities: Partial<Record<ModelCapability, boolean>> = {};
  for (const [ollama, cap] of Object.entries(OLLAMA_CAPABILITIES)) {
    if (list) capabilities[cap] = list.includes(ollama);
  }
  let context: number | undefined;
  const info = body['model_info'];
  if (isRecord(info)) {
    const architecture = stringField(info, 'general.architecture');
    if (architecture !== undefined) context = numberField(info, `${architecture}.context_length`);
  }
  return {
    chat: !list || list.includes('completion'),
    traits: { context_window_tokens: context, capabilities },
  };
}

export async function listOllama(listing: FamilyListing): Promise<DiscoveredModel[]> {
  const url = joinUrl(listing.base_url, '/api/tags');
  const body = await requestVendorJson({ url, headers: headersOf(listing), secrets: listing.secrets }, listing.options);
  if (!isRecord(body) || !Array.isArray(body['models'])) {
    throw new DiscoveryError('protocol_error', `${url.origin}${url.pathname} did not answer a model list`);
  }
  const names = [
    ...new Set(
      body['models']
        .map((m) => (isRecord(m) ? stringField(m, 'name') ?? stringField(m, 'model') : undefined))
        .filter((n): n is string => n !== undefined),
    ),
  ];
  const shown = new Map<string, ShownModel | undefined>();
  // A few lookups at a time: a local Ollama serialises model loads and gains nothing from more.
  for (let i = 0; i < names.length; i += SHOW_CONCURRENCY) {
    const batch = names.slice(i, i + SHOW_CONCURRENCY);
    const results = await Promise.all(batch.map((name) => showModel(listing, name)));
    batch.forEach((name, j) => shown.set(name, results[j]));
  }
  const models: DiscoveredModel[] = [];
  for (const name of names) {
    const details = shown.get(name);
    if (details && !details.chat) continue;
    models.push({ slug: name, display_name: name, characteristics: characterise(listing.index, name, details?.traits) });
  }
  return models;
}
