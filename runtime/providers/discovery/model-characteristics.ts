import {
  IMAGE_PROFILES,
  KNOWN_MODELS,
  indexKnownModels,
  lookupKnownModel,
  type ImageProfile,
  type KnownModel,
} from './characteristics-table.js';
import { MODEL_CAPABILITIES, type ModelCapability, type ModelCharacteristics } from './discovered-model.js';

// Turns what a vendor listing says about a model, plus the maintained table, into the
// characteristics of spec 2.12. Vendor facts win over the table; the table wins over the
// fallbacks.

/** Fractions of the context window (see ModelCharacteristics). */
export const DEFAULT_COMPACT_THRESHOLD = 0.8;
export const DEFAULT_PROACTIVE_THRESHOLD = 0.6;
/** For a model neither the vendor nor the table knows: small enough to be safe almost anywhere. */
export const FALLBACK_CONTEXT_WINDOW_TOKENS = 32_768;

/** What a listing reported; every field optional because most vendors report little. */
export interface ReportedTraits {
  readonly context_window_tokens?: number | undefined;
  /** Capabilities the vendor affirms (true) or denies (false); unmentioned ones come from the table. */
  readonly capabilities?: Partial<Record<ModelCapability, boolean>> | undefined;
  /** Image limits family to use when the table does not know the model. */
  readonly image_profile?: ImageProfile | undefined;
}

export type KnownModelIndex = ReturnType<typeof indexKnownModels>;

/** The index of KNOWN_MODELS, built once: it is read-only, and every attempt's start reads it. */
let knownModelsIndex: KnownModelIndex | undefined;

/** The index of `models`; the default table's is built once per process and shared. */
export function buildKnownModelIndex(models: readonly KnownModel[] = KNOWN_MODELS): KnownModelIndex {
  if (models === KNOWN_MODELS) return (knownModelsIndex ??= indexKnownModels(models));
  return indexKnownModels(models);
}

function positiveInteger(value: number | undefined): number | undefined {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
}

export function characterise(index: KnownModelIndex, slug: string, reported: ReportedTraits = {}): ModelCharacteristics {
  const known = lookupKnownModel(index, slug);
  const set = new Set<ModelCapability>(known?.capabilities ?? []);
  for (const [name, supported] of Object.entries(reported.capabilities ?? {}) as [ModelCapability, boolean | undefined][]) {
    if (supported === true) set.add(name);
    else if (supported === false) set.delete(name);
  }
  // Stable order (the vocabulary's), so equal models compare equal in tests and UIs.
  const capabilities = MODEL_CAPABILITIES.filter((c) => set.has(c));
  const characteristics: ModelCharacteristics = {
    capabilities,
    compact_threshold: DEFAULT_COMPACT_THRESHOLD,
    proactive_context_management_threshold: DEFAULT_PROACTIVE_THRESHOLD,
    context_window_tokens:
      positiveInteger(reported.context_window_tokens) ?? known?.context_window_tokens ?? FALLBACK_CONTEXT_WINDOW_TOKENS,
  };
  if (capabilities.includes('image_input')) {
    const profile = known?.image_profile ?? reported.image_profile ?? 'generic';
    characteristics.image_input = { ...IMAGE_PROFILES[profile] };
  }
  if (capabilities.includes('video_input')) {
    characteristics.video_input = { max_video_bytes: known?.max_video_bytes ?? 20_971_520 };
    characteristics.url_input = { video: [...(known?.url_video ?? [])] };
  }
  return characteristics;
}
