import { STATUS_CODES } from 'node:http';
import { AppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { errorResponse } from './error-body.js';
import { StreamedBody, type HttpMethod, type HttpRequest, type HttpResponse, type RawHandler, type RouteDefinition } from './http-types.js';
import { RequestBody } from './request-body.js';
import { createRequestIds } from './request-id.js';
import { loadUws, type Uws } from './uws.js';
import { serializeJson } from './json-text.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** Called once per answered request, for metrics. */
  onResponse?: (method: string, route: string, status: number, seconds: number) => void;
}

interface KnownPattern {
  pattern: string;
  regex: RegExp;
  methods: Set<string>;
}

/** The most bytes of a refused (413) body read and discarded before the connection closes. */
const DISCARD_LIMIT = 64 * 1024 * 1024;

const METHOD_FN = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'del' } as const;
const statusLine = (status: number): string => `${status} ${STATUS_CODES[status] ?? ''}`;

function paramNames(pattern: string): string[] {
  return pattern.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1));
}

interface Exchange {
  aborted: boolean;
  answered: boolean;
  /**
   * Made on first use: most handlers never look at their signal, and an AbortController per
   * request measured ~1.5 % of a cached GET's CPU.
   */
  controller: AbortController | null;
  /** Counts the request out of the in-flight total exactly once (answered or aborted). */
  settle: () => void;
}

/** The exchange's abort signal (already aborted when the client left before it was asked for). */
function signalOf(exchange: Exchange): AbortSignal {
  if (!exchange.controller) {
    exchange.controller = new AbortController();
    if (exchange.aborted) exchange.controller.abort();
  }
  return exchange.controller.signal;
}

/**
 * The uWebSockets.js front end shared by every role: routes are registered straight into the
 * uWS router (its matching is the fast path); a catch-all answers 405 with Allow for a known
 * path with another method and 404 otherwise. Every response carries X-Request-Id, every
 * request is logged by route pattern (never by URL or query string), and no exception escapes
 * a handler: anything that is not an AppError becomes a logged 500 `internal`.
 */
export class HttpServer {
  readonly app: Uws.TemplatedApp;
  private readonly uws = loadUws();
  private readonly known: KnownPattern[] = [];
  private readonly requestIdFrom = createRequestIds();
  private listenSocket: Uws.us_listen_socket | null = null;
  private inFlight = 0;
  private boundPort = 0;

  constructor(private readonly options: HttpServerOptions) {
    this.app = this.uws.App();
  }

  get port(): number {
    return this.boundPort;
  }

  /** Registers a JSON/bytes route. */
  route(definition: RouteDefinition): void {
    this.remember(definition.method, definition.pattern);
    const names = paramNames(definition.pattern);
    this.app[METHOD_FN[definition.method]](definition.pattern, (res, req) => this.dispatch(definition, names, res, req));
  }

  /** Registers a handler that takes over the raw uWS response (streams). */
  raw(method: HttpMethod, pattern: string, handler: RawHandler): void {
    this.remember(method, pattern);
    const names = paramNames(pattern);
    this.app[METHOD_FN[method]](pattern, (res, req) => {
      const params: Record<string, string> = {};
      names.forEach((name, i) => (params[name] = req.getParameter(i) ?? ''));
      handler(res, req, { requestId: this.requestIdFrom(req.getHeader('x-request-id') || undefined), params });
    });
  }

  /** Patterns and methods served, for the OpenAPI document and the router test. */
  routes(): Array<{ pattern: string; methods: string[] }> {
    return this.known.map((k) => ({ pattern: k.pattern, methods: [...k.methods].sort() }));
  }

  async listen(): Promise<number> {
    this.app.any('/*', (res, req) => this.fallback(res, req));
    await new Promise<void>((resolve, reject) => {
      this.app.listen(this.options.host, this.options.port, (socket) => {
        if (!socket) return reject(new Error(`cannot listen on ${this.options.host}:${this.options.port} (in use, or not an address of this machine): change server.port (SVC_SERVER__PORT) or server.host (SVC_SERVER__HOST)`));
        this.listenSocket = socket;
        this.boundPort = this.uws.us_socket_local_port(socket);
        resolve();
      });
    });
    return this.boundPort;
  }

  /** Stops accepting, lets in-flight requests finish within graceMs, then closes connections. */
  async close(graceMs: number): Promise<void> {
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    const deadline = Date.now() + graceMs;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    (this.app as unknown as { close?: () => void }).close?.();
  }

  private remember(method: string, pattern: string): void {
    let entry = this.known.find((k) => k.pattern === pattern);
    if (!entry) {
      const source = pattern.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      entry = { pattern, regex: new RegExp(`^${source}/?$`), methods: new Set() };
      this.known.push(entry);
    }
    entry.methods.add(method);
  }

  private fallback(res: Uws.HttpResponse, req: Uws.HttpRequest): void {
    const requestId = this.requestIdFrom(req.getHeader('x-request-id') || undefined);
    const path = req.getUrl();
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const started = performance.now();
    const exchange: Exchange = { aborted: false, answered: false, controller: null, settle: () => undefined };
    res.onAborted(() => (exchange.aborted = true));
    const match = this.known.find((k) => k.regex.test(path));
    const error = match
      ? new AppError('method_not_allowed', `method ${method} is not allowed here`, { headers: { allow: [...match.methods].sort().join(', ') } })
      : new AppError('not_found', 'no such endpoint');
    const { response } = errorResponse(error, requestId);
    this.write(res, exchange, requestId, response);
    this.logRequest(requestId, method, match?.pattern ?? '(unmatched)', response.status, started, {});
  }

  private dispatch(definition: RouteDefinition, names: string[], res: Uws.HttpResponse, req: Uws.HttpRequest): void {
    const started = performance.now();
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      if (!(key in headers)) headers[key] = value;
    });
    const requestId = this.requestIdFrom(headers['x-request-id']);
    let settled = false;
    this.inFlight++;
    const exchange: Exchange = {
      aborted: false,
      answered: false,
      controller: null,
      settle: () => {
        if (settled) return;
        settled = true;
        this.inFlight--;
      },
    };
    let stream: RequestBody | null = null;
    // Registered before any await (uWS requires it): a vanished client aborts the handler.
    res.onAborted(() => {
      exchange.aborted = true;
      exchange.controller?.abort();
      stream?.abort();
      exchange.settle();
    });
    const params: Record<string, string> = {};
    let badParam = false;
    names.forEach((name, i) => {
      try {
        params[name] = decodeURIComponent(req.getParameter(i) ?? '');
      } catch {
        badParam = true;
      }
    });
    const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString('latin1');
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const run = (body: Buffer | null): void => {
      const request: HttpRequest = {
        method: definition.method,
        route: definition.pattern,
        path,
        query,
        headers,
        params,
        requestId,
        remoteAddress,
        get signal() {
          return signalOf(exchange);
        },
        log: {},
        body,
        bodyStream: stream,
      };
      void this.answer(definition, request, res, exchange, started, badParam, () => stream !== null && !stream.complete);
    };
    if (!definition.body) return run(null);
    if (definition.body.stream) {
      const declared = headers['content-length'] === undefined ? null : Number(headers['content-length']);
      // A declared length over the limit is refused before a byte is read (uWS discards a
      // declared body no handler takes, so the connection stays up to DISCARD_LIMIT).
      if (declared !== null && declared > definition.body.maxBytes) return this.refuseBody(res, exchange, requestId, started, definition, definition.body.maxBytes, declared > DISCARD_LIMIT);
      stream = new RequestBody(res, definition.body.maxBytes, declared);
      return run(null);
    }
    this.readBody(res, exchange, headers, definition.body.maxBytes, requestId, started, definition, run);
  }

  /**
   * Runs the handler and writes its response (or the error's). One async frame instead of a
   * promise chain per request; nothing escapes: a failing write is logged, the request is
   * always settled.
   */
  private async answer(definition: RouteDefinition, request: HttpRequest, res: Uws.HttpResponse, exchange: Exchange, started: number, badParam: boolean, bodyLeft: () => boolean): Promise<void> {
    const { requestId } = request;
    let response: HttpResponse;
    try {
      if (badParam) throw new AppError('invalid_argument', 'malformed percent-encoding in the path');
      response = await definition.handler(request);
    } catch (error) {
      const mapped = errorResponse(error, requestId);
      if (mapped.internal) this.options.logger.error({ request_id: requestId, route: definition.pattern, err: error }, 'unhandled error');
      response = mapped.response;
    }
    try {
      // A streamed body the handler did not read to its end is still on the wire: the
      // connection cannot carry another request, so it is closed after the response.
      this.write(res, exchange, requestId, response, bodyLeft());
      this.logRequest(requestId, definition.method, definition.pattern, response.status, started, request.log);
    } catch (error) {
      this.options.logger.error({ request_id: requestId, route: definition.pattern, err: error }, 'writing the response failed');
    } finally {
      exchange.settle();
    }
  }

  private refuseBody(res: Uws.HttpResponse, exchange: Exchange, requestId: string, started: number, definition: RouteDefinition, maxBytes: number, closeConnection: boolean): void {
    const { response } = errorResponse(new AppError('payload_too_large', `request body exceeds ${maxBytes} bytes`), requestId);
    this.write(res, exchange, requestId, response, closeConnection);
    this.logRequest(requestId, definition.method, definition.pattern, 413, started, {});
    exchange.settle();
  }

  private readBody(
    res: Uws.HttpResponse,
    exchange: Exchange,
    headers: Record<string, string>,
    maxBytes: number,
    requestId: string,
    started: number,
    definition: RouteDefinition,
    done: (body: Buffer) => void,
  ): void {
    const refuse = (closeConnection: boolean): void => this.refuseBody(res, exchange, requestId, started, definition, maxBytes, closeConnection);
    // A body refused for its size is still read and thrown away (up to DISCARD_LIMIT) before
    // the connection may close: closing a socket with unread bytes makes the kernel answer with
    // a reset, and a client still writing its body then sees ECONNRESET or EPIPE, not the 413.
    const declared = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
    if (declared !== undefined && declared > maxBytes) {
      // uWS frames the body by Content-Length and discards what no onData handler takes, so
      // answering now keeps the connection and costs reading `declared` bytes at most.
      return refuse(declared > DISCARD_LIMIT);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    res.onData((chunk, isLast) => {
      if (exchange.answered || exchange.aborted) return;
      size += chunk.byteLength;
      // A chunked body has no declared length: once past the limit it is counted and dropped,
      // and the 413 goes out when it ends (the connection stays) or passes DISCARD_LIMIT (the
      // connection closes: uWS would otherwise keep reading after the answer, unbounded).
      if (size > maxBytes) refused = true;
      if (refused) {
        chunks.length = 0;
        if (isLast || size > DISCARD_LIMIT) refuse(!isLast);
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
      if (isLast) done(Buffer.concat(chunks, size));
    });
  }

  private write(res: Uws.HttpResponse, exchange: Exchange, requestId: string, response: HttpResponse, closeConnection = false): void {
    if (exchange.aborted || exchange.answered) return;
    exchange.answered = true;
    if (response.body instanceof StreamedBody) return void this.writeStreamed(res, exchange, requestId, response, response.body);
    let payload: string | Buffer = '';
    let contentType = response.contentType;
    if (response.body !== undefined) {
      if (Buffer.isBuffer(response.body) || typeof response.body === 'string') payload = response.body;
      else {
        // A thread's history read as text (JsonArrayText) is written as it is, not re-serialised.
        payload = serializeJson(response.body);
        contentType ??= 'application/json';
      }
    }
    res.cork(() => {
      res.writeStatus(statusLine(response.status));
      res.writeHeader('x-request-id', requestId);
      if (contentType) res.writeHeader('content-type', contentType);
      for (const [name, value] of Object.entries(response.headers ?? {})) res.writeHeader(name, value);
      res.end(payload, closeConnection);
    });
  }

  /**
   * Sends a StreamedBody with its Content-Length (uWS tryEnd): a piece the socket cannot take at
   * once is finished from onWritable before the next piece is read, so a slow client holds back
   * the source instead of filling memory. A source that fails midway cuts the connection (the
   * status line is gone already); a client that leaves stops the source.
   */
  private async writeStreamed(res: Uws.HttpResponse, exchange: Exchange, requestId: string, response: HttpResponse, body: StreamedBody): Promise<void> {
    const iterator = body.source[Symbol.asyncIterator]();
    res.cork(() => {
      res.writeStatus(statusLine(response.status));
      res.writeHeader('x-request-id', requestId);
      if (response.contentType) res.writeHeader('content-type', response.contentType);
      for (const [name, value] of Object.entries(response.headers ?? {})) res.writeHeader(name, value);
      if (body.length === 0) res.end();
    });
    if (body.length === 0) return void (await iterator.return?.());
    // A client that leaves while the socket is full gets no onWritable: the wait ends on abort.
    let wakeOnAbort = (): void => undefined;
    const onAbort = (): void => wakeOnAbort();
    const signal = signalOf(exchange);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const next = await iterator.next();
        if (exchange.aborted) break;
        if (next.done) {
          // The source ended short of the announced length: the response cannot be completed.
          res.cork(() => res.close());
          break;
        }
        const piece = next.value;
        const done = await new Promise<boolean>((resolve) => {
          wakeOnAbort = () => resolve(true);
          res.cork(() => {
            const offset = res.getWriteOffset();
            const [ok, finished] = res.tryEnd(piece, body.length);
            if (finished) return resolve(true);
            if (ok) return resolve(false);
            res.onWritable((at) => {
              if (exchange.aborted) {
                resolve(true);
                return true;
              }
              const [retried, over] = res.tryEnd(piece.subarray(at - offset), body.length);
              if (over || retried) resolve(over);
              return retried;
            });
          });
        });
        if (done || exchange.aborted) break;
      }
    } catch (err) {
      this.options.logger.error({ request_id: requestId, err }, 'streamed response failed');
      if (!exchange.aborted) res.cork(() => res.close());
    } finally {
      signal.removeEventListener('abort', onAbort);
      await iterator.return?.().catch(() => undefined);
    }
  }

  private logRequest(requestId: string, method: string, route: string, status: number, started: number, extra: Record<string, unknown>): void {
    const seconds = (performance.now() - started) / 1000;
    this.options.onResponse?.(method, route, status, seconds);
    // The record is built only when it is written (the bench and busy deployments run at warn).
    if (!this.options.logger.isLevelEnabled('info')) return;
    this.options.logger.info({ request_id: requestId, method, route, status, duration_ms: Math.round(seconds * 1e4) / 10, ...extra }, 'request');
  }
}
