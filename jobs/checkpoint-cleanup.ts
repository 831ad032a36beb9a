import { isInlineCheckpointKey, type OutboxHandler } from '../runtime/index.js';

/** Payload of a checkpoint_cleanup row: the object keys of replaced checkpoints. */
export interface CheckpointCleanupPayload {
  key?: string;
  keys?: string[];
}

/** Deletes the replaced checkpoint objects; deleting an absent object succeeds (repeat-safe). */
export const deleteCheckpointObjects: OutboxHandler = async (row, { services }) => {
  const payload = (row.payload ?? {}) as CheckpointCleanupPayload;
  const keys = [...(payload.key ? [payload.key] : []), ...(payload.keys ?? [])];
  if (keys.length === 0) return { type: 'failed', error: 'checkpoint_cleanup row names no object key' };
  // Inline checkpoints are never released here (their row is deleted in the transaction that
  // replaced them); a key with that prefix is not an object key, so it is never deleted.
  for (const key of keys) if (!isInlineCheckpointKey(key)) await services.objects.delete(key);
  return { type: 'delivered' };
};
