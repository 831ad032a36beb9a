// The wire protocols a model provider can speak. The streaming adapters are keyed by these
// exact ids, so adding one here means adding an adapter there.
export const MODEL_APIS = [
  'openai-chat',
  'openai-responses',
  'anthropic-messages',
  'gemini-generate',
  'bedrock-converse',
  'cohere-chat',
] as const;

export type ModelApi = (typeof MODEL_APIS)[number];

export function isModelApi(value: unknown): value is ModelApi {
  return typeof value === 'string' && (MODEL_APIS as readonly string[]).includes(value);
}
