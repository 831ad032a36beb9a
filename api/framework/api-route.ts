import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { HttpMethod, HttpRequest, Permission, Principal, Queryable, Services, StatementKey, StatementKeyRefusal } from '../../runtime/index.js';
import type pg from 'pg';
import type { ListCursors } from './cursor.js';

/** What a handler returns; `etag` adds the ETag header `"<id>:<version>"`. */
export interface ApiResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  etag?: { id: string; version: number };
  contentType?: string;
}

export interface ApiContext<P, Q, B> {
  readonly services: Services;
  readonly request: HttpRequest;
  readonly requestId: string;
  /** The caller; null only on routes with auth 'none'. */
  readonly principal: Principal;
  /** The workspace the request acts in (empty on routes with workspace 'none'). */
  readonly workspaceId: string;
  /** The client address limits count against (see clientAddress). Never logged. */
  readonly clientAddress: string;
  /** Counts an attempt on the account with this (normalized) email address: 429 beyond the limit. */
  limitAccount(email: string): Promise<void>;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** This list's signed cursors: decode `query.cursor` into a checked position, build a page. */
  readonly cursors: ListCursors;
  /**
   * Checks If-Match against the loaded resource. Call it after loading the resource within the
   * workspace (so a missing resource is 404 first); missing header 428, stale 412.
   */
  precondition(current: { id: string; version: number }): void;
  /**
   * Runs the effect in one transaction; when the request carries an Idempotency-Key, the
   * record of the response is completed in that same transaction, so both commit together.
   */
  transaction(fn: (tx: pg.PoolClient) => Promise<ApiResult>): Promise<ApiResult>;
  /** For effects committed elsewhere (e.g. inside a thread actor's transaction). */
  completeIdempotency(tx: Queryable, result: ApiResult): Promise<void>;
  /**
   * Routes with `idempotencyInTransaction`: the first step of the effect's transaction (takes
   * the key, or throws the replay / 409 / 422). A no-op for other routes.
   */
  beginIdempotency(tx: Queryable): Promise<void>;
  /**
   * Routes with `idempotencyInTransaction` and a key: for an effect made by ONE statement that
   * records the key itself (the inbox POST's enqueueOnThread), in place of begin/complete.
   * Null without a key or on other routes.
   */
  readonly statementIdempotency: StatementIdempotency | null;
}

/** See ApiRouteSpec.storedRows. */
export interface StoredRows {
  readonly status: number;
  render(rows: Record<string, unknown>): unknown;
}

/** The folded claim for an effect that is one statement (FoldedIdempotency implements it). */
export interface StatementIdempotency {
  readonly statementKey: StatementKey;
  /** The statement wrote nothing: throws 409, 422 or the replay; resolves when the transactional path must answer. */
  refused(refusal: StatementKeyRefusal, db: Queryable): Promise<void>;
  /** The statement committed the record with its effect. */
  recorded(): void;
}

export interface ApiResponseSpec {
  description: string;
  schema?: TSchema;
}

type StaticOr<T, D> = T extends TSchema ? Static<T> : D;

export interface ApiRouteSpec<P extends TObject | undefined = TObject | undefined, Q extends TObject | undefined = TObject | undefined, B extends TSchema | undefined = TSchema | undefined> {
  method: HttpMethod;
  /** OpenAPI-style path: `/api/v1/agents/{agent_id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  description?: string;
  /** 'none': no credential (login, health-like routes). Default: a credential is required. */
  auth?: 'credential' | 'none';
  /** 'none': the route does not act in a workspace (login sessions need no X-Workspace-ID). */
  workspace?: 'required' | 'none';
  /** Default: read for GET, write otherwise. */
  permission?: Permission | 'none';
  params?: P;
  query?: Q;
  /** JSON body schema; `bodyOptional` allows an empty body. */
  body?: B;
  bodyOptional?: boolean;
  /** A binary body (uploads): accepted media types and size limit. */
  binaryBody?: { mediaTypes: string[]; maxBytes?: number };
  /**
   * A body the handler reads as it arrives (`ctx.request.bodyStream`), never held whole: large
   * uploads. `maxBytes` is read from the configuration; `mediaTypes` documents what is taken.
   */
  streamBody?: { mediaTypes: string[]; maxBytes: (config: Services['config']) => number; description: string };
  /** The route takes If-Match with the current ETag (required). */
  ifMatch?: boolean;
  idempotency?: 'required' | 'optional';
  /**
   * The Idempotency-Key is claimed inside the effect's one transaction (FoldedIdempotency), not
   * by a commit of its own before the handler. Only for handlers whose whole effect is that
   * transaction, which calls ctx.beginIdempotency(tx) first and ctx.completeIdempotency last
   * (ctx.transaction does both), with nothing done outside it that a twin must not repeat.
   */
  idempotencyInTransaction?: boolean;
  /**
   * The response an effect made by ONE statement records as rows (`{"$rows": …}`, see
   * statementIdempotency): its status, and how a replay renders the rows back to the body the
   * first response had (a thread's history as storedHistoryPrefix(n)). A route with it gets
   * ctx.statementIdempotency.
   */
  storedRows?: StoredRows;
  /**
   * The route takes a secret without a credential (sign-in, reset, invitation accept): each
   * well-formed request counts against auth.credential_attempts_per_address before any lookup,
   * and the handler counts the account with limitAccount() before it hashes a password.
   */
  credentialAttempt?: boolean;
  responses: Record<number, ApiResponseSpec>;
  handler: (context: ApiContext<StaticOr<P, Record<string, never>>, StaticOr<Q, Record<string, never>>, StaticOr<B, undefined>>) => Promise<ApiResult>;
}

/** Identity function that infers the handler's context types from the schemas. */
export function defineRoute<P extends TObject | undefined, Q extends TObject | undefined, B extends TSchema | undefined>(spec: ApiRouteSpec<P, Q, B>): ApiRouteSpec {
  return spec as unknown as ApiRouteSpec;
}
