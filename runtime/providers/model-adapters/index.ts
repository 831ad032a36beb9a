// Model adapters: one streaming client per vendor wire protocol, all normalised into
// ModelEvent (model-events.ts states the stream contract).
//
// Errors are events, not exceptions: every stream ends with exactly one `finish` or `error`
// event, whatever happened (HTTP status, dropped connection, malformed stream, timeout,
// cancellation). Upstream failures are never thrown; the iterable throws only on a bug.
// Retryable failures (429, 5xx, connection loss, timeout) are retried here with backoff,
// honouring Retry-After, but only while nothing has been emitted yet.
// Adapters never log, and credentials never appear in error messages.
import { Value } from '@sinclair/typebox/value';
import { checkSchema } from './compiled-check.js';
import { streamHttpCall } from './http-stream.js';
import { nodeHttpRequest } from './http-transport.js';
import { decodeAnthropicMessages, prepareAnthropicMessages } from './anthropic-messages.js';
import { decodeBedrockConverse, prepareBedrockConverse } from './bedrock-converse.js';
import { decodeCohereChat, prepareCohereChat } from './cohere-chat.js';
import { decodeGeminiGenerate, prepareGeminiGenerate } from './gemini-generate.js';
import { modelError, MODEL_ERROR_CODES, type ModelEvent } from './model-events.js';
import { uncarriedMedia } from './media-support.js';
import { ModelRequest, unresolvedAsset } from './model-request.js';
import { decodeOpenAiChat, prepareOpenAiChat } from './openai-chat.js';
import { decodeOpenAiResponses, prepareOpenAiResponses } from './openai-responses.js';
import { DEFAULT_RETRY_POLICY, withRetry } from './retry.js';
import type { HttpRequester, ModelEndpoint, StreamOptions, WireProtocol } from './wire-protocol.js';

export * from './model-events.js';
export * from './model-request.js';
export { API_KEY_SCHEMES, joinUrl } from './wire-protocol.js';
export type { ApiKeyScheme, AwsCredentials, FetchLike, ModelEndpoint, StreamOptions } from './wire-protocol.js';
export { API_MEDIA, apiCarries, uncarriedMedia, type MediaCarriage } from './media-support.js';
// Shared with the web clients (runtime/providers/web): one reading of Retry-After, one abortable sleep.
export { retryAfterMs, safeMessage } from './upstream-errors.js';
export { abortableSleep } from './retry.js';
export { checkSchema } from './compiled-check.js';

export const MODEL_APIS = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini-generate', 'bedrock-converse', 'cohere-chat'] as const;
export type ModelApi = (typeof MODEL_APIS)[number];

export function isModelApi(value: unknown): value is ModelApi {
  return typeof value === 'string' && (MODEL_APIS as readonly string[]).includes(value);
}

export function wireProtocol(api: ModelApi): WireProtocol {
  switch (api) {
    case 'openai-chat':
      return { prepare: prepareOpenAiChat, decode: decodeOpenAiChat };
    case 'openai-responses':
      return { prepare: prepareOpenAiResponses, decode: decodeOpenAiResponses };
    case 'anthropic-messages':
      return { prepare: prepareAnthropicMessages, decode: decodeAnthropicMessages };
    case 'gemini-generate':
      return { prepare: prepareGeminiGenerate, decode: decodeGeminiGenerate };
    case 'bedrock-converse':
      return { prepare: prepareBedrockConverse, decode: decodeBedrockConverse };
    case 'cohere-chat':
      return { prepare: prepareCohereChat, decode: decodeCohereChat };
    default: {
      const unreachable: never = api;
      throw new Error(`unknown model api ${String(unreachable)}`);
    }
  }
}

/** Streams one model response as normalised events; see the header for the error contract. */
export async function* streamModel(
  api: ModelApi,
  endpoint: ModelEndpoint,
  request: ModelRequest,
  options: StreamOptions = {},
): AsyncGenerator<ModelEvent> {
  const protocol = wireProtocol(api);
  if (!checkSchema(ModelRequest, request)) {
    const first = Value.Errors(ModelRequest, request).First();
    yield modelError(MODEL_ERROR_CODES.invalid_request, `invalid model request at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`, false);
    return;
  }
  // Media must reach the adapter inline and in a form its vendor's format has room for.
  const asset = unresolvedAsset(request);
  const uncarried = asset === null ? uncarriedMedia(api, request) : null;
  if (asset !== null || uncarried !== null) {
    yield modelError(MODEL_ERROR_CODES.invalid_request, asset !== null ? `asset ${asset} was not resolved to inline media` : uncarried!, false);
    return;
  }
  const secrets = [endpoint.api_key, endpoint.aws?.secret_access_key, endpoint.aws?.session_token].filter((s): s is string => !!s);
  const injected = options.fetch;
  const send: HttpRequester = injected ? (url, init) => injected(url, init) : nodeHttpRequest;
  const policy = {
    max_retries: options.max_retries ?? DEFAULT_RETRY_POLICY.max_retries,
    base_delay_ms: options.retry_base_delay_ms ?? DEFAULT_RETRY_POLICY.base_delay_ms,
    max_delay_ms: options.retry_max_delay_ms ?? DEFAULT_RETRY_POLICY.max_delay_ms,
  };
  yield* withRetry(
    // Prepared per attempt: a SigV4 signature is bound to its timestamp.
    () =>
      streamHttpCall(protocol.prepare(endpoint, request, new Date()), protocol.decode, {
        send,
        signal: options.signal,
        timeout_ms: options.timeout_ms,
        secrets,
      }),
    policy,
    options.signal,
  );
}
