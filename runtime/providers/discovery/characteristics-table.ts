import type { ImageInputLimits, ModelCapability } from './discovered-model.js';

// Known model families for vendors whose listing says little or nothing about a model
// (OpenAI, Groq, DeepSeek, Together…). Keys are slug prefixes; the longest match wins, and a
// match must end at a word boundary so `gemma3` does not claim `gemma3n`. Slugs and keys are
// compared in a normalised form (see normaliseSlug) so that `claude-3.5-sonnet` (OpenRouter),
// `claude-3-5-sonnet` (Anthropic), `llama-v3p1` (Fireworks) and `llama3.1` (Ollama) meet.
// Keep entries conservative: a context window that is too large makes requests fail.

export const IMAGE_PROFILES = {
  openai: {
    image_split_max_height: 2048,
    image_split_overlap: 64,
    max_image_bytes: 20_971_520,
    max_image_dimension: 2048,
    max_images: 500,
    split_large_images: true,
    support_gif: true,
  },
  anthropic: {
    image_split_max_height: 1568,
    image_split_overlap: 64,
    max_image_bytes: 5_242_880,
    max_image_dimension: 8000,
    max_images: 100,
    split_large_images: true,
    support_gif: true,
  },
  gemini: {
    image_split_max_height: 3072,
    image_split_overlap: 64,
    max_image_bytes: 20_971_520,
    max_image_dimension: 3072,
    max_images: 3000,
    split_large_images: false,
    support_gif: false,
  },
  // Open-weight vision models behind inference vendors: small per-request limits.
  generic: {
    image_split_max_height: 1536,
    image_split_overlap: 64,
    max_image_bytes: 10_485_760,
    max_image_dimension: 2048,
    max_images: 8,
    split_large_images: true,
    support_gif: false,
  },
} as const satisfies Record<string, ImageInputLimits>;
export type ImageProfile = keyof typeof IMAGE_PROFILES;

export interface KnownModel {
  readonly prefix: string;
  readonly context_window_tokens: number;
  readonly capabilities: readonly ModelCapability[];
  readonly image_profile: ImageProfile;
  /** Hosts of video URLs the model reads itself (Gemini reads YouTube links). */
  readonly url_video?: readonly string[];
  readonly max_video_bytes?: number;
}

const T: ModelCapability = 'tools';
const I: ModelCapability = 'image_input';
const P: ModelCapability = 'pdf_input';
const A: ModelCapability = 'audio_input';
const V: ModelCapability = 'video_input';
const R: ModelCapability = 'reasoning';
const S: ModelCapability = 'structured_output';

type Row = readonly [prefix: string, context: number, capabilities: readonly ModelCapability[]];

function family(profile: ImageProfile, rows: readonly Row[], extra: Partial<KnownModel> = {}): KnownModel[] {
  return rows.map(([prefix, context_window_tokens, capabilities]) => ({
    prefix,
    context_window_tokens,
    capabilities,
    image_profile: profile,
    ...extra,
  }));
}

const GEMINI_VIDEO = { url_video: ['youtube.com', 'www.youtube.com', 'youtu.be'], max_video_bytes: 20_971_520 };

export const KNOWN_MODELS: readonly KnownModel[] = [
  ...family('openai', [
    ['gpt-5', 400_000, [T, I, R, S]],
    ['gpt-5-chat', 128_000, [T, I, S]],
    ['gpt-4.1', 1_047_576, [T, I, S]],
    ['gpt-4o', 128_000, [T, I, S]],
    ['gpt-4-turbo', 128_000, [T, I]],
    ['gpt-4', 8_192, [T]],
    ['gpt-3.5-turbo', 16_385, [T]],
    ['o1', 200_000, [T, I, R, S]],
    ['o1-mini', 128_000, [R]],
    ['o3', 200_000, [T, I, R, S]],
    ['o3-mini', 200_000, [T, R, S]],
    ['o4-mini', 200_000, [T, I, R, S]],
    ['codex-mini', 200_000, [T, I, R]],
    ['gpt-oss', 131_072, [T, R]],
  ]),
  ...family('anthropic', [
    ['claude-3-haiku', 200_000, [T, I]],
    ['claude-3-sonnet', 200_000, [T, I]],
    ['claude-3-opus', 200_000, [T, I]],
    ['claude-3-5-haiku', 200_000, [T, I, P]],
    ['claude-3-5-sonnet', 200_000, [T, I, P]],
    ['claude-3-7-sonnet', 200_000, [T, I, P, R]],
    ['claude-sonnet-4', 200_000, [T, I, P, R]],
    ['claude-opus-4', 200_000, [T, I, P, R]],
    ['claude-haiku-4', 200_000, [T, I, P, R]],
  ]),
  ...family(
    'gemini',
    [
      ['gemini-1.5-pro', 2_097_152, [T, I, P, A, V, S]],
      ['gemini-1.5-flash', 1_048_576, [T, I, P, A, V, S]],
      ['gemini-2.0-flash', 1_048_576, [T, I, P, A, V, S]],
      ['gemini-2.5', 1_048_576, [T, I, P, A, V, R, S]],
      ['gemini-3', 1_048_576, [T, I, P, A, V, R, S]],
    ],
    GEMINI_VIDEO,
  ),
  ...family('generic', [
    ['gemma-2', 8_192, []],
    ['gemma-3', 131_072, [I]],
    ['llama-3', 8_192, []],
    ['llama-3.1', 131_072, [T]],
    ['llama-3.2', 131_072, [T]],
    ['llama-3.2-vision', 131_072, [I]],
    ['llama-3.3', 131_072, [T]],
    ['llama-4', 131_072, [T, I]],
    ['mistral', 32_768, [T]],
    ['mistral-large', 131_072, [T, S]],
    ['mistral-medium', 131_072, [T, I, S]],
    ['mistral-small', 131_072, [T, I, S]],
    ['mistral-nemo', 131_072, [T]],
    ['open-mistral-nemo', 131_072, [T]],
    ['ministral', 131_072, [T]],
    ['mixtral', 32_768, [T]],
    ['codestral', 256_000, [T]],
    ['devstral', 131_072, [T]],
    ['magistral', 128_000, [T, R]],
    ['pixtral', 131_072, [T, I]],
    ['deepseek-chat', 131_072, [T, S]],
    ['deepseek-reasoner', 131_072, [T, R]],
    ['deepseek-r1', 131_072, [R]],
    ['deepseek-v3', 131_072, [T]],
    ['grok-2-vision', 32_768, [I]],
    ['grok-3', 131_072, [T, S]],
    ['grok-3-mini', 131_072, [T, R, S]],
    ['grok-4', 256_000, [T, I, R, S]],
    ['grok-4-fast', 2_000_000, [T, I, R, S]],
    ['grok-4.1-fast', 2_000_000, [T, I, R, S]],
    ['grok-code-fast', 256_000, [T, R]],
    ['qwen2.5', 131_072, [T]],
    ['qwen3', 131_072, [T, R]],
    ['qwen3-coder', 262_144, [T]],
    ['qwen3-vl', 262_144, [T, I, R]],
    ['qwq', 131_072, [R]],
    ['command', 4_096, []],
    ['command-r', 128_000, [T]],
    ['command-r7b', 128_000, [T]],
    ['command-a', 256_000, [T, S]],
    ['command-a-vision', 128_000, [I]],
    ['command-a-reasoning', 256_000, [T, R]],
    ['kimi-k2', 131_072, [T]],
    ['kimi-k2-0905', 262_144, [T]],
    ['kimi-k2-turbo', 262_144, [T]],
    ['kimi-k2-thinking', 262_144, [T, R]],
    ['kimi-latest', 131_072, [T, I]],
    ['moonshot-v1-8k', 8_192, [T]],
    ['moonshot-v1-32k', 32_768, [T]],
    ['moonshot-v1-128k', 131_072, [T]],
    ['glm-4.5', 131_072, [T, R]],
    ['glm-4.6', 200_000, [T, R]],
    ['phi-4', 16_384, []],
  ]),
];

/**
 * The comparable form of a slug: vendor path and `:tag` dropped, lowercase, a dash between a
 * leading name and its number (`llama3.1` → `llama-3.1`, `qwen2.5` → `qwen-2.5`), version
 * dots and Fireworks' `p` as dashes (`3.5`, `3p5` → `3-5`). Only the leading name is split:
 * elsewhere digits after a letter are dates or sizes (`haiku-20240307`, `r-08-2024`).
 */
export function normaliseSlug(slug: string): string {
  let s = slug.toLowerCase();
  s = s.slice(s.lastIndexOf('/') + 1);
  s = s.split(':', 1)[0] ?? s;
  s = s.replace(/^meta-(?=llama)/, '').replace(/^llama-?v(?=\d)/, 'llama');
  s = s.replace(/^([a-z]+)(\d)/, '$1-$2');
  s = s.replace(/(\d)[.p](\d)/g, '$1-$2');
  return s;
}

/** Normalised once per lookup table; built by callers, not at import. */
export function indexKnownModels(models: readonly KnownModel[]): ReadonlyArray<readonly [string, KnownModel]> {
  return models
    .map((m) => [normaliseSlug(m.prefix), m] as const)
    .sort((a, b) => b[0].length - a[0].length);
}

/** The longest known prefix of `slug` that ends at a word boundary, if any. */
export function lookupKnownModel(
  index: ReadonlyArray<readonly [string, KnownModel]>,
  slug: string,
): KnownModel | undefined {
  const s = normaliseSlug(slug);
  for (const [prefix, model] of index) {
    if (s.startsWith(prefix) && (s.length === prefix.length || !/[a-z0-9]/.test(s[prefix.length] ?? ''))) {
      return model;
    }
  }
  return undefined;
}
