import type { OutboxHandler } from '../runtime/index.js';

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
  for (const key of keys) await services.objects.delete(key);
  return { type: 'delivered' };
};
