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
 * `https://api.cohere.com` (`/v2/chat`). `headers` are added last and win.
 */
export interface ModelEndpoint {
  base_url: string;
  api_key?: string;
  headers?: Record<string, string>;
  aws?: AwsCredentials;
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface StreamOptions {
  signal?: AbortSignal;
  /**
   * Inactivity limit: the longest wait for the response headers and then between two body
   * chunks. A long answer that keeps streaming never times out; a stalled one does.
   */
  timeout_ms?: number;
  /** Retries after the first attempt for retryable failures before any output (default 2). */
  max_retries?: number;
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

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
