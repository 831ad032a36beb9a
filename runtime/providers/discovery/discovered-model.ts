import { Type, type Static } from '@sinclair/typebox';

// The discovered model entry of spec 2.12, served by GET /model-providers/{id}/models.

/** Capability names used in `characteristics.capabilities`. */
export const MODEL_CAPABILITIES = [
  'tools',
  'image_input',
  'pdf_input',
  'audio_input',
  'video_input',
  'reasoning',
  'structured_output',
] as const;
export type ModelCapability = (typeof MODEL_CAPABILITIES)[number];

export const ImageInputLimits = Type.Object({
  image_split_max_height: Type.Integer({ minimum: 1, description: 'Height of each slice when a tall image is split.' }),
  image_split_overlap: Type.Integer({ minimum: 0, description: 'Pixels repeated between consecutive slices.' }),
  max_image_bytes: Type.Integer({ minimum: 1 }),
  max_image_dimension: Type.Integer({ minimum: 1, description: 'Longest side sent; larger images are scaled down.' }),
  max_images: Type.Integer({ minimum: 1, description: 'Images per request.' }),
  split_large_images: Type.Boolean(),
  support_gif: Type.Boolean(),
});
export type ImageInputLimits = Static<typeof ImageInputLimits>;

// Thresholds are fractions of context_window_tokens: at compact_threshold the conversation is
// compacted; at the lower proactive threshold old tool output starts being trimmed.
export const ModelCharacteristics = Type.Object({
  capabilities: Type.Array(Type.String()),
  compact_threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  proactive_context_management_threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  context_window_tokens: Type.Integer({ minimum: 1 }),
  // Present only when the model takes images / video; absent means "not supported".
  image_input: Type.Optional(ImageInputLimits),
  url_input: Type.Optional(Type.Object({ video: Type.Array(Type.String(), { description: 'Hosts of video URLs the model reads itself.' }) })),
  video_input: Type.Optional(Type.Object({ max_video_bytes: Type.Integer({ minimum: 1 }) })),
});
export type ModelCharacteristics = Static<typeof ModelCharacteristics>;

export const DiscoveredModel = Type.Object({
  slug: Type.String({ minLength: 1, description: "The vendor's model name, as used in requests." }),
  display_name: Type.String({ minLength: 1 }),
  characteristics: ModelCharacteristics,
});
export type DiscoveredModel = Static<typeof DiscoveredModel>;
