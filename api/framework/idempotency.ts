import { createHash } from 'node:crypto';
import {
  AppError,
  claimIdempotencyKey,
  completeIdempotencyKey,
  insertCompletedIdempotencyKey,
  insertCompletedIdempotencyKeyAtCommit,
  deferToCommit,
  isTransactionClient,
  lockIdempotencyScope,
  isDatabaseUnavailable,
  JsonArrayText,
  newClaimToken,
  releaseIdempotencyKey,
  STORED_ROWS,
  type IdempotencyScope,
  type Queryable,
  type StatementKey,
  type StatementKeyRefusal,
} from '../../runtime/index.js';
import type { ApiResult, StoredRows } from './api-route.js';

const KEY = /^[!-~]{1,512}$/;
/** Stands in a stored response for a thread's message_history: its first `$history_prefix` messages. */
const HISTORY_PREFIX = '$history_prefix';
// Records are kept at least 24 h (DESIGN.md); a claim is presumed dead after 60 s.
const RETENTION_SECONDS = 48 * 3600;
const CLAIM_SECONDS = 60;

export function readIdempotencyKey(header: string | undefined, mode: 'required' | 'optional' | undefined): string | null {
  if (!mode) return null;
  if (header === undefined) {
    if (mode === 'required') throw new AppError('invalid_argument', 'Idempotency-Key header is required for this operation', { details: { field: 'header.idempotency-key' } });
    return null;
  }
  if (!KEY.test(header)) throw new AppError('invalid_argument', 'Idempotency-Key must be 1 to 512 printable ASCII characters without spaces', { details: { field: 'header.idempotency-key' } });
  return header;
}

export function fingerprintOf(method: string, route: string, body: string): string {
  return createHash('sha256').update(method).update('\n').update(route).update('\n').update(body).digest('hex');
}

/** One request's hold on its Idempotency-Key. */
export class IdempotencyHold {
  private completed = false;

  private constructor(
    readonly scope: IdempotencyScope,
    private readonly token: string,
  ) {}

  /**
   * Claims the key or answers for it: a completed twin's stored response is replayed
   * (Idempotent-Replayed: true); a different request under the same key is 422; a twin still
   * in flight is 409.
   */
  static async acquire(db: Queryable, scope: IdempotencyScope): Promise<IdempotencyHold | ApiResult> {
    const token = newClaimToken();
    const claim = await claimIdempotencyKey(db, scope, { lockSeconds: CLAIM_SECONDS, retentionSeconds: RETENTION_SECONDS, token }).catch((error: unknown) => {
      // The claim may have committed before its answer was lost with the connection.
      if (isDatabaseUnavailable(error)) releaseLater(db, scope, token);
      throw error;
    });
    switch (claim.outcome) {
      case 'claimed':
        return new IdempotencyHold(scope, token);
      case 'completed':
        return { status: claim.status_code, body: await expandStoredBody(db, scope.workspace_id, claim.response_body), headers: { 'idempotent-replayed': 'true' } };
      case 'mismatch':
        throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
      case 'in_flight':
        throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still in progress', { headers: { 'retry-after': '1' } });
      default: {
        const never: never = claim;
        return never;
      }
    }
  }

  get isCompleted(): boolean {
    return this.completed;
  }

  /** Completes the record inside the effect's transaction; a lost claim aborts that transaction. */
  async complete(tx: Queryable, result: ApiResult): Promise<void> {
    if (this.completed) return;
    const ok = await completeIdempotencyKey(tx, this.scope, this.token, { status_code: result.status, body: storedBody(result.body) });
    if (!ok) throw new AppError('idempotency_key_in_use', 'the Idempotency-Key claim expired while the request ran; retry it');
    this.completed = true;
  }

  /** The transaction that completed the record rolled back after all: the record did not commit. */
  rolledBack(): void {
    this.completed = false;
  }

  async release(db: Queryable): Promise<void> {
    if (this.completed) return;
    await releaseIdempotencyKey(db, this.scope, this.token).catch((error: unknown) => {
      if (isDatabaseUnavailable(error)) releaseLater(db, this.scope, this.token);
    });
  }
}

/** Thrown inside the effect's transaction when the key already has a completed twin: the
 *  transaction rolls back and the framework answers the stored response instead. */
export class IdempotentReplay extends Error {
  constructor(readonly result: ApiResult) {
    super('idempotent replay');
  }
}

/**
 * The folded claim of a route with `idempotencyInTransaction`: no claim of its own before the
 * handler (that was a commit of its own, fsync'd, per request); the effect's transaction takes
 * the key first (begin) and records the response last (complete), so an idempotent request
 * costs one commit. The contract is unchanged:
 * - a twin whose effect transaction is open holds the key's advisory lock → 409
 *   idempotency_key_in_use (try-lock, never a wait);
 * - a completed twin → its stored response, `Idempotent-Replayed: true` (the effect rolls back);
 * - the same key with a different request → 422.
 * Exactly one effect commits per key: the lock serialises twins, and the completed record's
 * primary key would refuse a second one even where the lock was not taken.
 */
export class FoldedIdempotency {
  private begunIn: Queryable | null = null;
  /** begin found a stale in-flight claim of the previous release (replaced at completion). */
  private staleClaim = true;
  private completed = false;

  constructor(
    readonly scope: IdempotencyScope,
    /** The route's response as a statement that records its own key stores it (`{"$rows": …}`). */
    private readonly storedRows?: StoredRows,
  ) {}

  /**
   * For an effect made by ONE statement that records the key itself (enqueueOnThread): what the
   * statement is given. The contract is the same: the statement try-locks the key's advisory
   * lock and writes nothing when it is held or a record exists (see refused), and its record
   * commits with its effect.
   */
  get statementKey(): StatementKey {
    if (!this.storedRows) throw new Error('a statement records this key only on a route with storedRows');
    return { scope: this.scope, retentionSeconds: RETENTION_SECONDS, responseStatus: this.storedRows.status };
  }

  /**
   * The statement wrote nothing: a twin holds the key's lock (409), the record is another
   * request's (422) or a completed twin's (its stored response is replayed). A claim row of the
   * previous release resolves, leaving the answer to the transactional path (begin), which
   * tells a stale claim from a live one.
   */
  async refused(refusal: StatementKeyRefusal, db: Queryable): Promise<void> {
    if (!refusal.locked) throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still in progress', { headers: { 'retry-after': '1' } });
    const found = refusal.existing;
    if (!found) return;
    if (found.fingerprint !== this.scope.fingerprint) throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
    if (found.state === 'completed' && found.status_code !== null && found.response_body !== null) {
      throw new IdempotentReplay({ status: found.status_code, body: await expandStoredBody(db, this.scope.workspace_id, found.response_body, this.storedRows), headers: { 'idempotent-replayed': 'true' } });
    }
  }

  /** The statement committed the record with its effect. */
  recorded(): void {
    this.completed = true;
  }

  get isCompleted(): boolean {
    return this.completed;
  }

  /**
   * The first statements of the effect's transaction (before any lock the effect takes). Run
   * again by every try of a retried transaction (withTransaction may hand the same client back),
   * so each try holds the key's lock.
   */
  async begin(tx: Queryable): Promise<void> {
    this.begunIn = null;
    const found = await lockIdempotencyScope(tx, this.scope);
    switch (found.outcome) {
      case 'free':
        this.begunIn = tx;
        this.staleClaim = found.stale_claim;
        return;
      case 'completed':
        throw new IdempotentReplay({ status: found.status_code, body: await expandStoredBody(tx, this.scope.workspace_id, found.response_body, this.storedRows), headers: { 'idempotent-replayed': 'true' } });
      case 'mismatch':
        throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
      case 'in_flight':
        throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still in progress', { headers: { 'retry-after': '1' } });
      default: {
        const never: never = found;
        return never;
      }
    }
  }

  /** The last statement of the effect's transaction: the record commits with the effect. */
  async complete(tx: Queryable, result: ApiResult): Promise<void> {
    if (this.completed) return;
    if (this.begunIn !== tx) await this.begin(tx);
    const response = { status_code: result.status, body: storedBody(result.body), retentionSeconds: RETENTION_SECONDS };
    if (isTransactionClient(tx)) {
      // Travels with the COMMIT (one round trip): another holder's row (a previous-release
      // claim) fails the insert, and with it the commit — this effect then does not commit.
      const staleClaim = this.staleClaim;
      deferToCommit(tx, () => insertCompletedIdempotencyKeyAtCommit(tx, this.scope, response, staleClaim));
    } else {
      const ok = await insertCompletedIdempotencyKey(tx, this.scope, response);
      // Another holder's record appeared (a previous-release claim): this effect must not commit.
      if (!ok) throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still in progress', { headers: { 'retry-after': '1' } });
    }
    this.completed = true;
  }

  rolledBack(): void {
    this.completed = false;
    this.begunIn = null;
  }
}

/**
 * A request that failed because the database went away could not release its claim either:
 * its key would answer 409 until the claim goes stale (CLAIM_SECONDS). The release is retried
 * in the background instead, so the client's retry succeeds as soon as the database is back.
 * Safe at any time: it deletes only this holder's still in-flight claim, never a completed
 * record (an effect that did commit keeps its record and is replayed).
 */
function releaseLater(db: Queryable, scope: IdempotencyScope, token: string): void {
  const deadline = Date.now() + CLAIM_SECONDS * 1000;
  const attempt = (delay: number): void => {
    if (Date.now() + delay > deadline) return;
    setTimeout(() => {
      releaseIdempotencyKey(db, scope, token).catch(() => attempt(Math.min(delay * 2, 5000)));
    }, delay).unref();
  };
  attempt(250);
}

/**
 * The response as its record stores it. A thread in the body (`body.thread`, as the inbox and
 * continuation routes answer) is stored without its message_history: `{"$history_prefix": n}`
 * stands for its first n messages. A thread's history is append-only (runs append at their seal,
 * runtime/stores/threads.ts; nothing rewrites or shortens it, and threads are never deleted), so
 * the first n messages read at replay are the ones the first response carried. Without this,
 * every POST on a long thread wrote its whole history again into the record (1 MB at 2,000
 * messages: ~11 ms of PostgreSQL per POST, bench/RESULTS.md session 10).
 */
/** Stands in a rendered body (StoredRows.render) for a thread's first `count` messages, read back at replay. */
export function storedHistoryPrefix(count: number): Record<string, number> {
  return { [HISTORY_PREFIX]: count };
}

export function storedBody(body: unknown): string {
  const thread = (body as { thread?: { id?: unknown; message_history?: unknown } } | null | undefined)?.thread;
  const history = thread?.message_history;
  if (!thread || typeof thread.id !== 'string' || !(Array.isArray(history) || history instanceof JsonArrayText)) return JSON.stringify(body ?? null);
  return JSON.stringify({ ...(body as object), thread: { ...thread, message_history: { [HISTORY_PREFIX]: history.length } } });
}

/** The stored response with a thread's history prefix read back (see storedBody); a record stored as rows (`{"$rows": …}`) is rendered first by its route (StoredRows: the same views of the same rows as the first response). */
export async function expandStoredBody(db: Queryable, workspaceId: string, text: string, storedRows?: StoredRows): Promise<unknown> {
  const parsed = JSON.parse(text) as Record<string, unknown> | null;
  const stored = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed[STORED_ROWS] : undefined;
  if (stored !== undefined && !storedRows) throw new AppError('internal', 'the stored response is rows this route cannot render');
  const body = (stored !== undefined ? storedRows!.render(stored as Record<string, unknown>) : parsed) as { thread?: { id?: unknown; message_history?: unknown } } | null;
  const marker = body?.thread?.message_history as Record<string, unknown> | undefined;
  const count = marker && !Array.isArray(marker) ? marker[HISTORY_PREFIX] : undefined;
  if (typeof count !== 'number' || typeof body?.thread?.id !== 'string') return body;
  const rows = await db.query<{ messages: unknown[] | null }>(
    `select (select jsonb_agg(m order by i) from jsonb_array_elements(message_history) with ordinality as h(m, i) where i <= $3) as messages
       from threads where workspace_id = $1 and id = $2`,
    [workspaceId, body.thread.id, count],
  );
  const messages = rows.rows[0]?.messages ?? [];
  // Append-only: fewer messages than the first response carried would be a broken invariant.
  if (messages.length !== count) throw new AppError('internal', 'the stored response refers to thread history that is no longer there');
  body.thread.message_history = messages;
  return body;
}
