import type { Queryable } from '../db/index.js';

// Inline checkpoints (migration 0016): a checkpoint small enough is stored in PostgreSQL in the
// transaction of the step that commits it, under a key with INLINE_CHECKPOINT_PREFIX that
// runs.checkpoint_key points to. Everything else about the pointer is unchanged: it moves with
// the step's items in one transaction (RUNS.md 3), fenced by the attempt (RUNS.md 2).

export const INLINE_CHECKPOINT_PREFIX = 'inline:';

export function isInlineCheckpointKey(key: string): boolean {
  return key.startsWith(INLINE_CHECKPOINT_PREFIX);
}

/** Stores an inline checkpoint in the caller's (step commit's) transaction. */
export async function insertInlineCheckpoint(tx: Queryable, key: string, runId: string, state: Uint8Array): Promise<void> {
  // A retried step commit (its first answer lost) writes the same key again: keep one row.
  await tx.query(`insert into run_checkpoints (key, run_id, state) values ($1, $2, $3) on conflict (key) do nothing`, [key, runId, Buffer.from(state.buffer, state.byteOffset, state.byteLength)]);
}

/**
 * Deletes a replaced inline checkpoint in the transaction that replaced it. Inline rows need no
 * outbox: the delete commits or rolls back with the new pointer, so a committed pointer never
 * names a deleted row (the property the checkpoint_cleanup outbox gives objects, RUNS.md 5).
 */
export async function deleteInlineCheckpoint(tx: Queryable, key: string): Promise<void> {
  await tx.query(`delete from run_checkpoints where key = $1`, [key]);
}

export async function readInlineCheckpoint(db: Queryable, key: string): Promise<Uint8Array | null> {
  const result = await db.query<{ state: Buffer }>(`select state from run_checkpoints where key = $1`, [key]);
  return result.rows[0]?.state ?? null;
}
