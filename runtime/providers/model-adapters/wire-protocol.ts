// What one wire protocol contributes (request building and stream decoding), and the
// endpoint and options every protocol shares. Transport, timeouts and retries live elsewhere
// (http-stream.ts, retry.ts), so a protocol module is pure translation.
import type { ModelEvent } from './model-events.js';
import type { ModelRequest } from './model-request.js';

export interface AwsCredentials {
  region: string;
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

/**
 * Where and how to call a vendor. `base_url` follows each vendor SDK's notion of base URL:
 * OpenAI-style `https://api.openai.com/v1` (paths `/chat/completions`, `/responses`);
 * `https://api.anthropic.com` (`/v1/messages`); `https://generativelanguage.googleapis.com`
 * (`/v1beta/models/{model}:streamGenerateContent?alt=sse`);
 * `https://bedrock-runtime.{region}.amazonaws.com` (`/model/{id}/converse-stream`);
 * `https://api.cohere.com` (`/v2/chat`). A query string on `base_url` (Azure's
 * `?api-version=…`) is kept on every request. `headers` are added last and win.
 */
export interface ModelEndpoint {
  base_url: string;
  api_key?: string;
  /** How `api_key` is sent when the vendor differs from the protocol's own scheme (Azure's `api-key`, a Vertex access token as bearer). */
  auth?: ApiKeyScheme;
  headers?: Record<string, string>;
  aws?: AwsCredentials;
  /**
   * Gemini on Vertex AI: the same protocol on Vertex paths. With a project and location the
   * model is `projects/{p}/locations/{l}/publishers/google/models/{m}` (service-account access
   * tokens); without them `publishers/google/models/{m}` (express-mode API keys).
   */
  vertex?: { project_id?: string; location?: string };
}

/** Header schemes an API key or access token travels in. */
export const API_KEY_SCHEMES = ['bearer', 'api-key', 'x-api-key', 'x-goog-api-key'] as const;
export type ApiKeyScheme = (typeof API_KEY_SCHEMES)[number];

/** The header carrying `endpoint.api_key`: the endpoint's scheme, else the protocol's `native` one. */
export function apiKeyHeaders(endpoint: ModelEndpoint, native: ApiKeyScheme): Record<string, string> {
  const key = endpoint.api_key;
  if (!key) return {};
  const scheme = endpoint.auth ?? native;
  switch (scheme) {
    case 'bearer':
      return { authorization: `Bearer ${key}` };
    case 'api-key':
    case 'x-api-key':
    case 'x-goog-api-key':
      return { [scheme]: key };
    default: {
      const unreachable: never = scheme;
      throw new Error(`unknown api key scheme ${String(unreachable)}`);
    }
  }
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** What a model call needs of a response; a fetch Response has it, and so does http-transport's. */
export interface HttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: Headers;
  readonly body: AsyncIterable<Uint8Array> | null;
  text(): Promise<string>;
}

/** Sends one model call (always a POST with a string body) and resolves at the response's headers. */
export type HttpRequester = (url: string, init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<HttpResponse>;

export interface StreamOptions {
  signal?: AbortSignal;
  /**
   * Inactivity limit: the longest wait for the response headers and then between two body
   * chunks. A long answer that keeps streaming never times out; a stalled one does.
   */
  timeout_ms?: number;
  /** Retries after the first attempt for retryable failures before any output (default 2). */
  max_retries?: number;
  /** Sends the call through this fetch instead of the node:http transport (http-transport.ts). */
  fetch?: FetchLike;
  /** Backoff base and cap; a Retry-After longer than `retry_max_delay_ms` is not waited for. */
  retry_base_delay_ms?: number;
  retry_max_delay_ms?: number;
}

export interface HttpCall {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WireProtocol {
  /** Builds one attempt's HTTP call; called again for every retry (Bedrock re-signs). */
  prepare(endpoint: ModelEndpoint, request: ModelRequest, now: Date): HttpCall;
  /** Decodes a 2xx streaming body into events; throws ModelProtocolError on malformed input. */
  decode(body: AsyncIterable<Uint8Array>): AsyncIterable<ModelEvent>;
}

/**
 * `base` + `path`, keeping a query string of the base (Azure's `?api-version=`) after the
 * path and merging the path's own query (`?alt=sse`) into it.
 */
export function joinUrl(base: string, path: string): string {
  const [baseRoot = '', baseQuery = ''] = splitQuery(base);
  const [pathRoot = '', pathQuery = ''] = splitQuery(path);
  const query = [baseQuery, pathQuery].filter((q) => q !== '').join('&');
  return baseRoot.replace(/\/+$/, '') + pathRoot + (query === '' ? '' : `?${query}`);
}

function splitQuery(url: string): [string, string] {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at + 1)];
}
