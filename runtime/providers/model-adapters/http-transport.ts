// The model call's HTTP client: node:http(s) with a keep-alive agent, in place of the global
// fetch. A model call is one POST whose body is read chunk by chunk; fetch wraps it in WHATWG
// objects (Request, Response, ReadableStreams made transferable, AbortSignals, a DOMException
// for every body released before its end) that measured ~45 % of an attempt thread's CPU for
// a short answer (bench/RESULTS.md, "Levers, session 4"). This client hands the decoder the
// response's own chunks (Buffers, which are Uint8Arrays) and builds WHATWG Headers only for a
// failed status, where retry hints are read from them.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { HttpRequester, HttpResponse } from './wire-protocol.js';

interface Agents {
  http: HttpAgent;
  https: HttpsAgent;
}

// One pair of keep-alive agents per thread (a module of a worker thread is per thread): a
// connection to a vendor is reused by the next model call of any attempt on this thread, as
// the global fetch's dispatcher did. Built on first use, never at import.
let agents: Agents | null = null;

function keepAliveAgents(): Agents {
  agents ??= { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return agents;
}

/**
 * POSTs `body` to `url` and resolves with the response once its headers arrive. `signal`
 * aborts the request at any point: before the headers the promise rejects, after them the
 * body's iteration throws. A body left before its end is drained rather than destroyed, so
 * that its connection goes back to the pool (a decoder stops at the vendor's terminal event,
 * which may come a chunk before the end of the response); an aborted one is destroyed.
 */
export const nodeHttpRequest: HttpRequester = (url, init) => {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') return Promise.reject(new TypeError(`unsupported protocol ${target.protocol}`));
  const { signal } = init;
  if (signal.aborted) return Promise.reject(abortError());
  const send = secure ? httpsRequest : httpRequest;
  const pool = keepAliveAgents();
  return new Promise<HttpResponse>((resolve, reject) => {
    let response: IncomingMessage | null = null;
    const req = send(target, {
      method: init.method,
      headers: { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) },
      agent: secure ? pool.https : pool.http,
    });
    const onAbort = (): void => {
      if (response === null) {
        reject(abortError());
        req.destroy();
      } else if (!response.complete) {
        // The body's iteration throws this; the connection goes with it. A complete response
        // is left alone: its connection may already serve another call.
        response.destroy(abortError());
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Kept for the request's whole life: a socket destroyed by an abort reports here after the
    // promise has settled, and an 'error' nobody listens to would end the thread.
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    req.once('response', (res) => {
      response = res;
      res.on('error', () => undefined); // reported by the body's iteration, if anyone still reads it
      res.once('close', () => signal.removeEventListener('abort', onAbort));
      resolve(responseOf(res, signal));
    });
    req.end(init.body);
  });
};

function responseOf(res: IncomingMessage, signal: AbortSignal): HttpResponse {
  const status = res.statusCode ?? 0;
  let headers: Headers | null = null;
  const body = decoded(res);
  return {
    ok: status >= 200 && status < 300,
    status,
    get headers(): Headers {
      headers ??= toHeaders(res);
      return headers;
    },
    body: chunks(res, body, signal),
    async text(): Promise<string> {
      const parts: Buffer[] = [];
      for await (const chunk of body) parts.push(chunk);
      return Buffer.concat(parts).toString('utf8');
    },
  };
}

/** The body as sent, decompressed when the server compressed it anyway (we never ask it to). */
function decoded(res: IncomingMessage): Readable {
  const encoding = (res.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decompress = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (decompress === null) return res;
  res.once('error', (err) => decompress.destroy(err));
  return res.pipe(decompress);
}

async function* chunks(res: IncomingMessage, body: Readable, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  let ended = false;
  try {
    // Not destroyed on an early return: that would close the connection (see below).
    for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) yield chunk;
    ended = true;
  } finally {
    // Left early (the decoder has its answer) and not aborted: read the rest and discard it,
    // so the connection is reused. Aborted: the request was destroyed with its socket.
    if (!ended && !signal.aborted) {
      if (body === res) res.resume();
      else body.destroy(); // a decompressed body left early: not worth keeping its connection
    }
  }
}

function toHeaders(res: IncomingMessage): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}

function abortError(): Error {
  const err = new Error('the request was aborted');
  err.name = 'AbortError';
  return err;
}
