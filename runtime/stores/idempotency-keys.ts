import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/index.js';
import { AppError, PG_UNIQUE_VIOLATION, pgCode } from '../errors/index.js';

export interface IdempotencyScope {
  workspace_id: string;
  principal_id: string;
  method: string;
  route: string;
  key: string;
  fingerprint: string;
}

export type IdempotencyClaim =
  | { outcome: 'claimed'; token: string }
  | { outcome: 'in_flight' }
  | { outcome: 'mismatch' }
  | { outcome: 'completed'; status_code: number; response_body: string };

const SCOPE = `workspace_id = $1 and principal_id = $2 and method = $3 and route = $4 and key = $5`;
const scopeValues = (s: IdempotencyScope) => [s.workspace_id, s.principal_id, s.method, s.route, s.key];

/**
 * Claims the key for this request, in its own short statement (autocommit). The insert wins
 * for exactly one of any number of concurrent twins (primary key); a loser reads the row:
 * completed → replay (or mismatch when the request differs), in flight → 409. A stale
 * in-flight claim (holder gone past locked_until, so its effect never committed) is taken
 * over by a conditional update that again only one twin can win.
 */
export function newClaimToken(): string {
  return randomBytes(12).toString('base64url');
}

/** `token` is the caller's (newClaimToken), so a claim whose answer was lost can still be released. */
export async function claimIdempotencyKey(db: Queryable, scope: IdempotencyScope, options: { lockSeconds: number; retentionSeconds: number; token: string }): Promise<IdempotencyClaim> {
  const { token } = options;
  const inserted = await db.query(
    `insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, locked_until, claim_token, expires_at)
     values ($1, $2, $3, $4, $5, $6, 'in_flight', now() + make_interval(secs => $7), $8, now() + make_interval(secs => $9))
     on conflict do nothing`,
    [...scopeValues(scope), scope.fingerprint, options.lockSeconds, token, options.retentionSeconds],
  );
  if (inserted.rowCount === 1) return { outcome: 'claimed', token };
  const existing = await db.query(`select fingerprint, state, locked_until < now() as stale, status_code, response_body from idempotency_keys where ${SCOPE}`, scopeValues(scope));
  const row = existing.rows[0];
  if (!row) return claimIdempotencyKey(db, scope, options); // purged between the two statements
  if (row.fingerprint !== scope.fingerprint) return { outcome: 'mismatch' };
  if (row.state === 'completed') return { outcome: 'completed', status_code: row.status_code, response_body: row.response_body };
  if (!row.stale) return { outcome: 'in_flight' };
  const taken = await db.query(
    `update idempotency_keys set locked_until = now() + make_interval(secs => $6), claim_token = $7
      where ${SCOPE} and state = 'in_flight' and locked_until < now()`,
    [...scopeValues(scope), options.lockSeconds, token],
  );
  return taken.rowCount === 1 ? { outcome: 'claimed', token } : { outcome: 'in_flight' };
}

/**
 * Completes the claim inside the effect's transaction, so the record commits with the effect.
 * Returns false when the claim was taken over (this holder was presumed dead): the caller
 * must then roll the effect back.
 */
export async function completeIdempotencyKey(db: Queryable, scope: IdempotencyScope, token: string, response: { status_code: number; body: string }): Promise<boolean> {
  const result = await db.query(
    `update idempotency_keys set state = 'completed', locked_until = null, claim_token = null, status_code = $7, response_body = $8
      where ${SCOPE} and state = 'in_flight' and claim_token = $6`,
    [...scopeValues(scope), token, response.status_code, response.body],
  );
  return result.rowCount === 1;
}

/** Releases a claim whose request failed without an effect, so the client may retry the key. */
export async function releaseIdempotencyKey(db: Queryable, scope: IdempotencyScope, token: string): Promise<void> {
  await db.query(`delete from idempotency_keys where ${SCOPE} and state = 'in_flight' and claim_token = $6`, [...scopeValues(scope), token]);
}

/** Purges expired records (kept at least 24 h), a bounded batch per call. */
export async function purgeIdempotencyKeys(db: Queryable, limit: number): Promise<number> {
  const result = await db.query(
    `delete from idempotency_keys where ctid in (select ctid from idempotency_keys where expires_at < now() limit $1)`,
    [limit],
  );
  return result.rowCount ?? 0;
}

/**
 * The folded claim (one transaction per idempotent request), step 1, run as the first
 * statements of the effect's own transaction: a transaction-level advisory lock on the key's
 * scope, taken with try-lock. While a twin's effect transaction holds it, this one is refused
 * at once (`in_flight` → 409); it is released when that transaction ends, so nothing can leave
 * a key stuck. The record is read by a separate, later statement — under READ COMMITTED its
 * snapshot is taken after the lock was granted, so a twin that committed and let go of the
 * lock is seen (completed → replay, or mismatch). A claim row of the previous release
 * (state in_flight, written by its autocommit claim) still answers 409 until it goes stale.
 */
export async function lockIdempotencyScope(tx: Queryable, scope: IdempotencyScope): Promise<Exclude<IdempotencyClaim, { outcome: 'claimed' }> | { outcome: 'free'; stale_claim: boolean }> {
  // Both statements travel together (one round trip; the pool pipelines): the record is read
  // after the try-lock in statement order, so it is read under the lock when the lock was
  // taken; when it was not, the read is simply ignored (409, no wait either way).
  const [locked, existing] = await Promise.all([
    tx.query<{ locked: boolean }>(`select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as locked`, [idempotencyLockKey(scope)]),
    tx.query(`select fingerprint, state, locked_until < now() as stale, status_code, response_body from idempotency_keys where ${SCOPE}`, scopeValues(scope)),
  ]);
  if (!locked.rows[0]?.locked) return { outcome: 'in_flight' };
  const row = existing.rows[0];
  if (!row) return { outcome: 'free', stale_claim: false };
  if (row.fingerprint !== scope.fingerprint) return { outcome: 'mismatch' };
  if (row.state === 'completed') return { outcome: 'completed', status_code: row.status_code, response_body: row.response_body };
  return row.stale ? { outcome: 'free', stale_claim: true } : { outcome: 'in_flight' };
}

/**
 * The folded claim, step 2: the completed record, inserted in the effect's transaction after
 * the effect. A stale in-flight claim of the previous release is replaced; any other existing
 * row (a previous-release claim that appeared since step 1) makes this return false and the
 * caller rolls the effect back — the primary key, not only the lock, keeps one effect per key.
 */
export async function insertCompletedIdempotencyKey(tx: Queryable, scope: IdempotencyScope, response: { status_code: number; body: string; retentionSeconds: number }): Promise<boolean> {
  const result = await tx.query(
    `insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, status_code, response_body, expires_at)
     values ($1, $2, $3, $4, $5, $6, 'completed', $7, $8, now() + make_interval(secs => $9))
     on conflict (workspace_id, principal_id, method, route, key) do update
       set fingerprint = excluded.fingerprint, state = 'completed', locked_until = null, claim_token = null,
           status_code = excluded.status_code, response_body = excluded.response_body, expires_at = excluded.expires_at
       where idempotency_keys.state = 'in_flight' and idempotency_keys.locked_until < now()`,
    [...scopeValues(scope), scope.fingerprint, response.status_code, response.body, response.retentionSeconds],
  );
  return result.rowCount === 1;
}

/**
 * insertCompletedIdempotencyKey for a statement issued with the COMMIT (deferToCommit): the
 * caller cannot look at a row count before committing, so "another holder's row exists" must
 * fail the statement itself, which rolls the effect back. Two statements, one round trip: a
 * stale in-flight claim of the previous release is deleted, then a plain insert, whose primary
 * key refuses any row still there (a live claim, or a completed twin the lock did not keep
 * out) with 23505 — rethrown as idempotency_key_in_use.
 */
export function insertCompletedIdempotencyKeyAtCommit(
  tx: Queryable,
  scope: IdempotencyScope,
  response: { status_code: number; body: string; retentionSeconds: number },
  /** lockIdempotencyScope saw a stale claim: only then is there a row to delete first. */
  staleClaim = true,
): Promise<void> {
  // Without a stale claim seen under the lock no delete is sent: a row that appeared since
  // (a previous-release claim, which takes no lock) still fails the insert, as it should.
  const stale = staleClaim ? tx.query(`delete from idempotency_keys where ${SCOPE} and state = 'in_flight' and locked_until < now()`, scopeValues(scope)) : Promise.resolve();
  const inserted = tx.query(
    `insert into idempotency_keys (workspace_id, principal_id, method, route, key, fingerprint, state, status_code, response_body, expires_at)
     values ($1, $2, $3, $4, $5, $6, 'completed', $7, $8, now() + make_interval(secs => $9))`,
    [...scopeValues(scope), scope.fingerprint, response.status_code, response.body, response.retentionSeconds],
  );
  return Promise.all([stale, inserted]).then(
    () => undefined,
    (error: unknown) => {
      if (pgCode(error) === PG_UNIQUE_VIOLATION) throw new AppError('idempotency_key_in_use', 'a request with this Idempotency-Key is still in progress', { headers: { 'retry-after': '1' } });
      throw error;
    },
  );
}

/** The key of the scope's transaction-level advisory lock (hashed with hashtextextended(…, 0)). */
export function idempotencyLockKey(s: IdempotencyScope): string {
  return `idempotency\n${s.workspace_id}\n${s.principal_id}\n${s.method}\n${s.route}\n${s.key}`;
}

/** The existing record a folded statement found for its key (enqueue-input.ts). */
export interface IdempotencyRecordFound {
  fingerprint: string;
  state: 'in_flight' | 'completed';
  stale: boolean;
  status_code: number | null;
  response_body: string | null;
}

/** What a statement that records its own key (the folded claim in ONE statement) is given. */
export interface StatementKey {
  scope: IdempotencyScope;
  retentionSeconds: number;
  /** The status of the response the record stores when the effect is made. */
  responseStatus: number;
}

/** A statement's key gate that stayed closed: the key's lock was held by a twin, or a record exists. */
export interface StatementKeyRefusal {
  locked: boolean;
  existing: IdempotencyRecordFound | null;
}
