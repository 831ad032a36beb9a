import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { DEFAULT_PROBE_TIMEOUT_MS, type ProbeBudget } from './probe-result.js';

// One HTTP request of a provider test, on node:http rather than fetch because the docker
// probe needs a Unix socket and TLS client certificates. Bodies are capped; `until` lets a
// streaming answer (an MCP server's SSE) end the read as soon as it has said enough.

export interface ProbeRequest {
  readonly url: URL;
  readonly method: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Talk HTTP over this Unix socket instead of TCP (docker's local engine). */
  readonly socketPath?: string;
  /** TLS client settings for https (docker's remote engine). */
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string };
  /** Stop reading once the text so far satisfies this. */
  readonly until?: (text: string) => boolean;
}

export interface ProbeResponse {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** A probe that failed before any HTTP status: unreachable, timed out, too large. */
export class ProbeTransportError extends Error {
  override readonly name = 'ProbeTransportError';
}

const MAX_BODY_BYTES = 1024 * 1024;

function where(url: URL, socketPath: string | undefined): string {
  return socketPath !== undefined ? `unix:${socketPath}` : `${url.origin}${url.pathname}`;
}

function readBody(response: IncomingMessage, spec: ProbeRequest, done: (text: string) => void, fail: (e: Error) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      response.destroy();
      fail(new ProbeTransportError(`${where(spec.url, spec.socketPath)} answered more than ${MAX_BODY_BYTES} bytes`));
      return;
    }
    chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    if (spec.until?.(text)) {
      response.destroy();
      done(text);
    }
  });
  response.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
  response.on('error', fail);
}

export function sendProbe(spec: ProbeRequest, budget: ProbeBudget): Promise<ProbeResponse> {
  const timeoutMs = budget.timeout_ms ?? DEFAULT_PROBE_TIMEOUT_MS;
  const https = spec.url.protocol === 'https:';
  const options: RequestOptions & { ca?: string; cert?: string; key?: string } = {
    method: spec.method,
    headers: { ...(spec.headers ?? {}), ...(spec.body !== undefined ? { 'content-length': String(Buffer.byteLength(spec.body)) } : {}) },
    ...(spec.socketPath !== undefined ? { socketPath: spec.socketPath } : {}),
    ...(https && spec.tls ? spec.tls : {}),
    ...(budget.signal ? { signal: budget.signal } : {}),
  };
  return new Promise<ProbeResponse>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const req = (https ? httpsRequest : httpRequest)(spec.url, options, (response) => {
      const status = response.statusCode ?? 0;
      const contentType = String(response.headers['content-type'] ?? '');
      readBody(response, spec, (text) => finish(() => resolve({ status, contentType, text })), (e) => finish(() => reject(e)));
    });
    // The whole exchange has one budget, so a server that trickles bytes cannot hold a probe.
    const timer = setTimeout(() => {
      req.destroy();
      finish(() => reject(new ProbeTransportError(`${where(spec.url, spec.socketPath)} did not answer within ${timeoutMs} ms`)));
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      const reason = typeof error.code === 'string' ? error.code : 'network error';
      finish(() => reject(new ProbeTransportError(`could not reach ${where(spec.url, spec.socketPath)} (${reason})`)));
    });
    req.end(spec.body);
  });
}

/** A short description of a non-2xx answer; the body is quoted only when asked to. */
export function statusMessage(response: ProbeResponse, url: URL, socketPath?: string): string {
  const at = where(url, socketPath);
  if (response.status === 401 || response.status === 403) return `${at} rejected the credential (HTTP ${response.status})`;
  return `${at} answered HTTP ${response.status}`;
}
