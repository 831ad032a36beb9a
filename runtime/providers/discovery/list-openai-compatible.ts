import type { DiscoveredModel, ModelCapability } from './discovered-model.js';
import { DiscoveryError } from './discovery-error.js';
import { isRecord, numberField, stringField, type FamilyListing } from './discovery-target.js';
import { characterise } from './model-characteristics.js';
import { joinUrl, requestVendorJson } from './vendor-request.js';

// GET {base}/models, the OpenAI listing that most vendors and gateways copy. OpenAI itself
// says nothing but the id; others add fields this reads when present: Groq and Vercel
// `context_window`, Together/OpenRouter/Fireworks/Moonshot `context_length`, Mistral
// `max_context_length` + `capabilities`, OpenRouter `architecture` + `supported_parameters`,
// Vercel `tags`, Fireworks `supports_*`, Hugging Face `providers[]`. Together answers a bare
// array instead of `{data: […]}`.

// Listings mix in models that cannot chat (embeddings, speech, images); with no `type` field
// to go by, these names give them away.
const NOT_CHAT = /(embed|whisper|tts|dall-e|davinci|babbage|moderation|gpt-image|sora|transcribe|rerank|realtime)/i;
// Together and Vercel `type` values of models that cannot chat (Mistral's `type` is "base" or
// "fine-tuned", so only known non-chat values exclude).
const NOT_CHAT_TYPES = new Set(['embedding', 'image', 'audio', 'moderation', 'rerank', 'transcribe', 'video']);

type Caps = Partial<Record<ModelCapability, boolean>>;

function modalities(entry: Record<string, unknown>, key: 'input_modalities' | 'output_modalities'): string[] | undefined {
  const architecture = entry['architecture'];
  if (!isRecord(architecture)) return undefined;
  const list = architecture[key];
  return Array.isArray(list) ? list.filter((m): m is string => typeof m === 'string') : undefined;
}

function isChatModel(entry: Record<string, unknown>, id: string): boolean {
  const type = stringField(entry, 'type');
  if (type !== undefined && NOT_CHAT_TYPES.has(type)) return false;
  const mistral = entry['capabilities'];
  if (isRecord(mistral) && mistral['completion_chat'] === false) return false;
  if (entry['supports_chat'] === false) return false;
  const outputs = modalities(entry, 'output_modalities');
  if (outputs && !outputs.includes('text')) return false;
  return !NOT_CHAT.test(id);
}

function reportedCapabilities(entry: Record<string, unknown>): Caps {
  const caps: Caps = {};
  const affirm = (cap: ModelCapability, value: unknown) => {
    if (typeof value === 'boolean') caps[cap] = value;
  };
  const mistral = entry['capabilities'];
  if (isRecord(mistral)) {
    affirm('tools', mistral['function_calling']);
    affirm('image_input', mistral['vision']);
  }
  affirm('tools', entry['supports_tools']);
  affirm('image_input', entry['supports_image_input'] ?? entry['supports_image_in']);
  affirm('reasoning', entry['supports_reasoning']);
  const inputs = modalities(entry, 'input_modalities');
  if (inputs) {
    caps.image_input = inputs.includes('image');
    if (inputs.includes('file')) caps.pdf_input = true;
    if (inputs.includes('audio')) caps.audio_input = true;
    if (inputs.includes('video')) caps.video_input = true;
  }
  const params = entry['supported_parameters'];
  if (Array.isArray(params)) {
    caps.tools = params.includes('tools');
    if (params.includes('reasoning') || params.includes('include_reasoning')) caps.reasoning = true;
    if (params.includes('structured_outputs')) caps.structured_output = true;
  }
  const tags = entry['tags'];
  if (Array.isArray(tags)) {
    if (tags.includes('tool-use')) caps.tools = true;
    if (tags.includes('reasoning')) caps.reasoning = true;
    if (tags.includes('vision')) caps.image_input = true;
    if (tags.includes('file-input')) caps.pdf_input = true;
  }
  const providers = entry['providers'];
  if (Array.isArray(providers) && providers.some((p) => isRecord(p) && p['supports_tools'] === true)) caps.tools = true;
  return caps;
}

function contextWindow(entry: Record<string, unknown>): number | undefined {
  const direct =
    numberField(entry, 'context_window') ?? numberField(entry, 'context_length') ?? numberField(entry, 'max_context_length');
  if (direct !== undefined) return direct;
  const top = entry['top_provider'];
  if (isRecord(top) && numberField(top, 'context_length') !== undefined) return numberField(top, 'context_length');
  const providers = entry['providers'];
  if (Array.isArray(providers)) {
    const lengths = providers.map((p) => (isRecord(p) ? numberField(p, 'context_length') : undefined));
    const known = lengths.filter((n): n is number => n !== undefined);
    // Hugging Face routes to whichever provider is up: the smallest window is the safe one.
    if (known.length > 0) return Math.min(...known);
  }
  return undefined;
}

export async function listOpenAiCompatible(listing: FamilyListing, auth: 'bearer' | 'api-key-header'): Promise<DiscoveredModel[]> {
  const headers: Record<string, string> = { ...listing.headers };
  if (listing.api_key !== undefined) {
    if (auth === 'bearer') headers['authorization'] = `Bearer ${listing.api_key}`;
    else headers['api-key'] = listing.api_key;
  }
  const url = joinUrl(listing.base_url, '/models');
  const body = await requestVendorJson({ url, headers, secrets: listing.secrets }, listing.options);
  const entries = Array.isArray(body) ? body : isRecord(body) && Array.isArray(body['data']) ? body['data'] : undefined;
  if (!entries) throw new DiscoveryError('protocol_error', `${url.origin}${url.pathname} did not answer a model list`);
  const models = new Map<string, DiscoveredModel>();
  for (const entry of entries) {
    if (!isRecord(entry)) continue;
    const id = stringField(entry, 'id');
    if (id === undefined || models.has(id) || !isChatModel(entry, id)) continue;
    models.set(id, {
      slug: id,
      display_name: stringField(entry, 'display_name') ?? stringField(entry, 'name') ?? id,
      characteristics: characterise(listing.index, id, {
        context_window_tokens: contextWindow(entry),
        capabilities: reportedCapabilities(entry),
      }),
    });
  }
  return [...models.values()].sort((a, b) => a.slug.localeCompare(b.slug));
}
