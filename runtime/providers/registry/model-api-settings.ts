import { Type, type TObject } from '@sinclair/typebox';
import type { ModelApi } from './model-apis.js';

// Per-API model settings (a model's `settings`, an agent's `model_settings`). Field names
// follow each vendor's wire names in snake_case so that adapters pass them through without
// a second vocabulary; objects are closed to catch typos, and the two OpenAI APIs keep an
// `extra_body` escape hatch for gateway-specific parameters.

const Temperature2 = Type.Number({ minimum: 0, maximum: 2, description: 'Sampling temperature.' });
const Temperature1 = Type.Number({ minimum: 0, maximum: 1, description: 'Sampling temperature.' });
const TopP = Type.Number({ minimum: 0, maximum: 1, description: 'Nucleus sampling probability mass.' });
const TopK = Type.Integer({ minimum: 1, description: 'Sample only from the k most likely tokens.' });
const Penalty = Type.Number({ minimum: -2, maximum: 2 });
const Seed = Type.Integer({ description: 'Best-effort deterministic sampling.' });
const StopSequences = Type.Array(Type.String({ minLength: 1 }), { maxItems: 16 });
const OutputTokens = (description: string) => Type.Integer({ minimum: 1, description });
const ExtraBody = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Vendor parameters merged into the request body as given.',
});

const OpenAiReasoningEffort = Type.Union(
  [Type.Literal('none'), Type.Literal('minimal'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')],
  { description: 'Reasoning effort for reasoning models (o-series, gpt-5, grok-3-mini…).' },
);
const Verbosity = Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]);

export const OpenAiChatSettings = Type.Object(
  {
    temperature: Type.Optional(Temperature2),
    top_p: Type.Optional(TopP),
    max_tokens: Type.Optional(OutputTokens('Output token limit (legacy name some gateways need).')),
    max_completion_tokens: Type.Optional(OutputTokens('Output token limit including reasoning tokens.')),
    presence_penalty: Type.Optional(Penalty),
    frequency_penalty: Type.Optional(Penalty),
    seed: Type.Optional(Seed),
    stop: Type.Optional(StopSequences),
    reasoning_effort: Type.Optional(OpenAiReasoningEffort),
    verbosity: Type.Optional(Verbosity),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    service_tier: Type.Optional(Type.String({ minLength: 1 })),
    extra_body: Type.Optional(ExtraBody),
  },
  { additionalProperties: false },
);

export const OpenAiResponsesSettings = Type.Object(
  {
    temperature: Type.Optional(Temperature2),
    top_p: Type.Optional(TopP),
    max_output_tokens: Type.Optional(OutputTokens('Output token limit including reasoning tokens.')),
    reasoning: Type.Optional(
      Type.Object(
        {
          effort: Type.Optional(OpenAiReasoningEffort),
          summary: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('concise'), Type.Literal('detailed')])),
        },
        { additionalProperties: false },
      ),
    ),
    text_verbosity: Type.Optional(Verbosity),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    service_tier: Type.Optional(Type.String({ minLength: 1 })),
    truncation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled')])),
    store: Type.Optional(Type.Boolean({ description: 'Let the vendor keep the response (needed for some reasoning reuse).' })),
    extra_body: Type.Optional(ExtraBody),
  },
  { additionalProperties: false },
);

export const AnthropicMessagesSettings = Type.Object(
  {
    max_tokens: Type.Optional(OutputTokens('Output token limit; the API requires one, the adapter defaults it.')),
    temperature: Type.Optional(Temperature1),
    top_p: Type.Optional(TopP),
    top_k: Type.Optional(TopK),
    stop_sequences: Type.Optional(StopSequences),
    thinking: Type.Optional(
      Type.Union([
        Type.Object(
          { type: Type.Literal('enabled'), budget_tokens: Type.Integer({ minimum: 1024 }) },
          { additionalProperties: false },
        ),
        Type.Object({ type: Type.Literal('adaptive') }, { additionalProperties: false }),
        Type.Object({ type: Type.Literal('disabled') }, { additionalProperties: false }),
      ]),
    ),
    effort: Type.Optional(
      Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('max')], {
        description: 'Reasoning effort on models that support it.',
      }),
    ),
    service_tier: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('standard_only')])),
  },
  { additionalProperties: false },
);

export const GeminiGenerateSettings = Type.Object(
  {
    temperature: Type.Optional(Temperature2),
    top_p: Type.Optional(TopP),
    top_k: Type.Optional(TopK),
    max_output_tokens: Type.Optional(OutputTokens('Output token limit.')),
    stop_sequences: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 5 })),
    presence_penalty: Type.Optional(Penalty),
    frequency_penalty: Type.Optional(Penalty),
    seed: Type.Optional(Seed),
    thinking_config: Type.Optional(
      Type.Object(
        {
          thinking_budget: Type.Optional(Type.Integer({ minimum: -1, description: '-1 lets the model decide; 0 disables.' })),
          thinking_level: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('high')])),
          include_thoughts: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const BedrockConverseSettings = Type.Object(
  {
    max_tokens: Type.Optional(OutputTokens('Output token limit (inferenceConfig.maxTokens).')),
    temperature: Type.Optional(Temperature1),
    top_p: Type.Optional(TopP),
    stop_sequences: Type.Optional(StopSequences),
    additional_model_request_fields: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Model-specific fields (top_k, thinking…) passed as additionalModelRequestFields.',
      }),
    ),
    performance_latency: Type.Optional(Type.Union([Type.Literal('standard'), Type.Literal('optimized')])),
  },
  { additionalProperties: false },
);

export const CohereChatSettings = Type.Object(
  {
    temperature: Type.Optional(Temperature1),
    p: Type.Optional(Type.Number({ minimum: 0.01, maximum: 0.99, description: 'Top-p.' })),
    k: Type.Optional(Type.Integer({ minimum: 0, maximum: 500, description: 'Top-k.' })),
    max_tokens: Type.Optional(OutputTokens('Output token limit.')),
    seed: Type.Optional(Seed),
    frequency_penalty: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stop_sequences: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 5 })),
    thinking: Type.Optional(
      Type.Object(
        {
          type: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
          token_budget: Type.Optional(Type.Integer({ minimum: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Settings schema per model API; every API has exactly one. */
export const MODEL_API_SETTINGS: Readonly<Record<ModelApi, TObject>> = {
  'openai-chat': OpenAiChatSettings,
  'openai-responses': OpenAiResponsesSettings,
  'anthropic-messages': AnthropicMessagesSettings,
  'gemini-generate': GeminiGenerateSettings,
  'bedrock-converse': BedrockConverseSettings,
  'cohere-chat': CohereChatSettings,
};
