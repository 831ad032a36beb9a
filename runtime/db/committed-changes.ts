import type pg from 'pg';
import type { Queryable } from './pool.js';

/**
 * A row that read caches may hold changed: the kind names the cache channel, `id` the entry
 * (see runtime/cache for what each kind's id is).
 */
export interface CommittedChange {
  kind: 'api_key' | 'session' | 'user' | 'membership' | 'agent' | 'model' | 'provider' | 'subscription';
  id: string;
}

export type CommittedChangeListener = (changes: CommittedChange[]) => void;

// Carried by the objects themselves (no module-level registry): the pool holds the listener of
// its process, a client checked out by withTransaction holds the changes noted so far, and
// every client knows the pool it came from.
const LISTENER = Symbol('committed-change-listener');
const PENDING = Symbol('pending-changes');
const OWNER = Symbol('owner-pool');

interface Tagged {
  [LISTENER]?: CommittedChangeListener;
  [PENDING]?: CommittedChange[];
  [OWNER]?: Tagged;
}

/** Sets the function told about every committed change of rows read caches hold (one per pool). */
export function onCommittedChanges(pool: pg.Pool, listener: CommittedChangeListener): void {
  (pool as unknown as Tagged)[LISTENER] = listener;
  pool.on('connect', (client) => ((client as unknown as Tagged)[OWNER] = pool as unknown as Tagged));
}

/**
 * Called by a store right after a statement that changed a cached row. Inside withTransaction
 * the change waits for the commit (a rolled-back change announces nothing, and a reader told
 * before the commit could read and cache the old row again); on the pool, or a client outside
 * a transaction, the statement committed on its own, so the listener hears it now.
 */
export function noteChange(db: Queryable, change: CommittedChange): void {
  const tagged = db as unknown as Tagged;
  const pending = tagged[PENDING];
  if (pending) return void pending.push(change);
  (tagged[LISTENER] ?? tagged[OWNER]?.[LISTENER])?.([change]);
}

/** withTransaction: starts collecting the transaction's changes on its client. */
export function beginChanges(client: pg.PoolClient): void {
  (client as unknown as Tagged)[PENDING] = [];
}

/** withTransaction: after COMMIT (changes announced) or ROLLBACK (dropped, announce false). */
export function endChanges(pool: pg.Pool, client: pg.PoolClient, announce: boolean): void {
  const tagged = client as unknown as Tagged;
  const changes = tagged[PENDING];
  delete tagged[PENDING];
  if (announce && changes && changes.length > 0) (pool as unknown as Tagged)[LISTENER]?.(changes);
}
