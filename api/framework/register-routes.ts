import type { TSchema } from '@sinclair/typebox';
import {
  AppError,
  authenticate,
  withTransaction,
  type HttpRequest,
  type HttpResponse,
  type HttpServer,
  type Principal,
  type Services,
} from '../../runtime/index.js';
import type { ApiContext, ApiResult, ApiRouteSpec } from './api-route.js';
import { canonicalJson } from './canonical-json.js';
import { CursorSigner, type ListCursors } from './cursor.js';
import { checkIfMatch, formatEtag } from './etag.js';
import { fingerprintOf, FoldedIdempotency, IdempotencyHold, IdempotentReplay, readIdempotencyKey } from './idempotency.js';
import { parseJsonBody } from './json-body.js';
import { parseQuery } from './query-string.js';
import { clientAddress, type CredentialAttempts } from './credential-attempts.js';
import type { RateLimiter } from './rate-limiter.js';
import { checkHeaderValues, checkText } from './text-values.js';
import { check, compile, type Validator } from './validate.js';

export const toUwsPattern = (path: string): string => path.replace(/\{([a-z0-9_]+)\}/g, ':$1');

const ANONYMOUS: Principal = {
  kind: 'user',
  id: 'anonymous',
  user_id: 'anonymous',
  organization_id: '',
  organization_role: 'member',
  workspace_id: null,
  role: null,
  permissions: new Set(),
};

function toHttp(result: ApiResult): HttpResponse {
  const headers = { ...(result.headers ?? {}) };
  if (result.etag) headers.etag = formatEtag(result.etag.id, result.etag.version);
  return { status: result.status, headers, body: result.body, ...(result.contentType ? { contentType: result.contentType } : {}) };
}

/** The limits the pipeline applies: per credential, and on credential attempts (per address, per account). */
export interface ApiLimiters {
  requests: RateLimiter;
  attempts: CredentialAttempts;
}

interface RouteTools {
  params?: Validator;
  query?: Validator;
  body?: Validator;
  cursors: ListCursors;
}

/**
 * Registers API routes on the shared HTTP server. Every request passes the same pipeline, in
 * this order: header values (400) → authenticate (401/403/404 workspace) → rate limit (429) →
 * permission (403) → path, query, body validation (400/413/415; no NUL or lone surrogate in
 * any of them) → credential-attempt limit per client address (429, routes marked
 * credentialAttempt) → Idempotency-Key (replay/409/422) → handler (which loads within the
 * workspace, 404, before its If-Match check, 428/412).
 */
export function registerRoutes(server: HttpServer, services: Services, limiters: ApiLimiters, routes: ApiRouteSpec[]): void {
  const maxBody = services.config.server.max_body_bytes;
  const maxUpload = services.config.server.max_upload_bytes;
  const signer = new CursorSigner(services.keyring);
  for (const spec of routes) {
    const validators: RouteTools = { cursors: signer.forList(`${spec.method} ${spec.path}`) };
    if (spec.params) validators.params = compile(spec.params);
    if (spec.query) validators.query = compile(spec.query);
    if (spec.body) validators.body = compile(spec.body as TSchema);
    const reads = spec.body !== undefined || spec.binaryBody !== undefined;
    const body = spec.streamBody
      ? { body: { maxBytes: spec.streamBody.maxBytes(services.config), stream: true } }
      : reads
        ? { body: { maxBytes: spec.binaryBody ? (spec.binaryBody.maxBytes ?? maxUpload) : maxBody } }
        : {};
    server.route({
      method: spec.method,
      pattern: toUwsPattern(spec.path),
      ...body,
      handler: (request) => handle(spec, validators, request, services, limiters).then(toHttp),
    });
  }
}

async function handle(spec: ApiRouteSpec, validators: RouteTools, request: HttpRequest, services: Services, limiters: ApiLimiters): Promise<ApiResult> {
  const { headers } = request;
  checkHeaderValues(headers);
  const address = clientAddress(request.remoteAddress, headers['x-forwarded-for'], services.config.server.trust_forwarded_for);
  const principal =
    spec.auth === 'none'
      ? ANONYMOUS
      : await authenticate(services.pool, { authorization: headers.authorization, workspace: headers['x-workspace-id'] }, { workspaceRequired: spec.workspace !== 'none', cache: services.credentialCache });
  request.log.principal_id = principal.id;
  if (principal.workspace_id) request.log.workspace_id = principal.workspace_id;
  if (spec.auth !== 'none' && limiters.requests.enabled) await limiters.requests.check(principal.id);
  const permission = spec.permission ?? (spec.method === 'GET' ? 'read' : 'write');
  if (permission !== 'none' && spec.auth !== 'none' && spec.workspace !== 'none' && !principal.permissions.has(permission)) {
    throw new AppError('forbidden', `this operation needs the ${permission} permission`);
  }
  for (const [name, value] of Object.entries(request.params)) checkText(value, `path.${name}`);
  if (validators.params) check(validators.params, request.params, 'path');
  const query = parseQuery(request.query, spec.query);
  if (validators.query) check(validators.query, query, 'query');
  let body: unknown;
  let fingerprintBody = '';
  if (spec.streamBody) {
    // The bytes are not known before the handler reads them: a replayed key is recognised by
    // what the request declares about its body (type, length, query).
    body = request.bodyStream;
    fingerprintBody = `stream:${headers['content-type'] ?? ''}:${headers['content-length'] ?? ''}:${request.query}`;
  } else if (spec.binaryBody) {
    body = request.body;
    fingerprintBody = request.body?.toString('base64') ?? '';
  } else if (spec.body !== undefined) {
    body = parseJsonBody(request.body, headers['content-type'], spec.bodyOptional === true);
    if (body !== undefined && validators.body) check(validators.body, body, 'body');
    fingerprintBody = canonicalJson(body ?? null);
  }
  // A well-formed credential attempt counts before any lookup or hash, so a flood costs one
  // counter increment per request; malformed ones were refused above without counting (that
  // took no more than parsing).
  if (spec.credentialAttempt) await limiters.attempts.address(address);
  const key = readIdempotencyKey(headers['idempotency-key'], spec.idempotency);
  let hold: IdempotencyHold | FoldedIdempotency | null = null;
  if (key !== null) {
    const scope = {
      workspace_id: principal.workspace_id ?? '',
      principal_id: principal.id,
      method: spec.method,
      route: spec.path,
      key,
      fingerprint: fingerprintOf(spec.method, `${spec.path}?${JSON.stringify(request.params)}`, fingerprintBody),
    };
    if (spec.idempotencyInTransaction) {
      // One transaction per request: the claim folds into the effect's transaction.
      hold = new FoldedIdempotency(scope, spec.storedRows);
    } else {
      const acquired = await IdempotencyHold.acquire(services.pool, scope);
      if (!(acquired instanceof IdempotencyHold)) return acquired;
      hold = acquired;
    }
  }
  const folded = hold instanceof FoldedIdempotency ? hold : null;
  const context: ApiContext<unknown, unknown, unknown> = {
    services,
    request,
    requestId: request.requestId,
    principal,
    workspaceId: principal.workspace_id ?? '',
    clientAddress: address,
    limitAccount: (email) => limiters.attempts.account(email),
    params: request.params,
    query,
    body,
    cursors: validators.cursors,
    precondition: (current) => {
      if (spec.ifMatch) checkIfMatch(headers['if-match'], current);
    },
    transaction: async (fn) => {
      try {
        return await withTransaction(services.pool, async (tx) => {
          await folded?.begin(tx);
          const value = await fn(tx);
          if (hold && value.status < 300) await hold.complete(tx, value);
          return value;
        });
      } catch (error) {
        hold?.rolledBack();
        throw error;
      }
    },
    completeIdempotency: async (tx, result) => {
      if (hold && result.status < 300) await hold.complete(tx, result);
    },
    beginIdempotency: async (tx) => {
      await folded?.begin(tx);
    },
    statementIdempotency: folded && spec.storedRows ? folded : null,
  };
  try {
    const result = await (spec.handler as (c: typeof context) => Promise<ApiResult>)(context);
    // A handler that committed its effect without completing the record (no transaction of its
    // own) still leaves a record, written right after the effect.
    if (hold && !hold.isCompleted && result.status < 300) await hold.complete(services.pool, result);
    if (hold instanceof IdempotencyHold && !hold.isCompleted) await hold.release(services.pool);
    return result;
  } catch (error) {
    // The folded claim found a completed twin: its effect rolled back; answer the stored response.
    if (error instanceof IdempotentReplay) return error.result;
    // Whatever completion ran inside a transaction either committed (the record is completed
    // and the release below matches nothing) or did not (its in-flight claim must go, so the
    // client's retry is not refused as in use): when the database went away mid-commit, the
    // flag alone cannot tell which.
    hold?.rolledBack();
    // A folded claim needs no release: its lock and record went with the rolled-back transaction.
    if (hold instanceof IdempotencyHold) await hold.release(services.pool);
    throw error;
  }
}
