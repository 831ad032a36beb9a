// One HTTP attempt: POST the prepared call, map a failed status to an `error` event, decode
// a 2xx body into events, and enforce the inactivity timeout and the caller's AbortSignal.
// Every way an attempt can end is an event: it yields exactly one terminal event.
import { modelError, MODEL_ERROR_CODES, type ModelError, type ModelEvent } from './model-events.js';
import { ModelProtocolError } from './protocol-error.js';
import { httpError, safeMessage } from './upstream-errors.js';
import type { HttpCall, HttpRequester, HttpResponse, WireProtocol } from './wire-protocol.js';

export interface AttemptContext {
  send: HttpRequester;
  signal?: AbortSignal | undefined;
  timeout_ms?: number | undefined;
  /** Credential values to scrub from any message that leaves this module. */
  secrets: readonly string[];
}

export async function* streamHttpCall(
  call: HttpCall,
  decode: WireProtocol['decode'],
  ctx: AttemptContext,
): AsyncGenerator<ModelEvent> {
  if (ctx.signal?.aborted) {
    yield cancelledError();
    return;
  }
  const controller = new AbortController();
  let finished = false;
  let stopped: 'timeout' | 'cancelled' | undefined;
  const onAbort = (): void => {
    stopped ??= 'cancelled';
    controller.abort();
  };
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const disarm = (): void => clearTimeout(timer);
  const arm = (): void => {
    disarm();
    if (ctx.timeout_ms === undefined) return;
    timer = setTimeout(() => {
      stopped ??= 'timeout';
      controller.abort();
    }, ctx.timeout_ms);
  };
  const failure = (err: unknown): ModelError => {
    if (stopped === 'timeout') return modelError(MODEL_ERROR_CODES.timeout, `no data from the model for ${ctx.timeout_ms} ms`, true);
    if (stopped === 'cancelled') return cancelledError();
    if (err instanceof ModelProtocolError) return modelError(MODEL_ERROR_CODES.protocol_error, err.message, false);
    return modelError(MODEL_ERROR_CODES.upstream_unavailable, safeMessage(`connection failed: ${describe(err)}`, ctx.secrets), true);
  };

  try {
    arm();
    let response: HttpResponse;
    try {
      response = await ctx.send(call.url, { method: 'POST', headers: call.headers, body: call.body, signal: controller.signal });
    } catch (err) {
      yield failure(err);
      return;
    }
    if (!response.ok) {
      let text = '';
      try {
        text = await response.text();
      } catch (err) {
        if (stopped) {
          yield failure(err);
          return;
        }
      }
      yield httpError(response.status, response.headers, text, ctx.secrets, Date.now());
      return;
    }
    if (!response.body) {
      yield modelError(MODEL_ERROR_CODES.protocol_error, 'the response has no body', false);
      return;
    }
    try {
      for await (const event of decode(watched(response.body, arm, disarm))) {
        // The timer only runs while waiting on the network, never while the consumer is
        // busy with an event (a slow consumer must not look like a stalled vendor).
        // Before the yield: a consumer that stops at `finish` never resumes this generator.
        if (event.type === 'finish') finished = true;
        yield event;
        if (event.type === 'finish' || event.type === 'error') return;
      }
    } catch (err) {
      yield failure(err);
      return;
    }
    yield modelError(MODEL_ERROR_CODES.upstream_unavailable, 'the stream ended before the response completed', true);
  } finally {
    disarm();
    ctx.signal?.removeEventListener('abort', onAbort);
    // Closes the connection when the consumer stops early, so the vendor stops generating.
    // After `finish` the vendor has stopped, and leaving the loop has already released the
    // body; aborting then only cost a DOMException and an abort dispatch per request.
    if (!finished) controller.abort();
  }
}

async function* watched(body: AsyncIterable<Uint8Array>, arm: () => void, disarm: () => void): AsyncGenerator<Uint8Array> {
  arm();
  for await (const chunk of body) {
    disarm();
    yield chunk;
    arm();
  }
  disarm();
}

function cancelledError(): ModelError {
  return modelError(MODEL_ERROR_CODES.cancelled, 'the model call was cancelled', false);
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail ? `${err.message} (${detail})` : err.message;
}
