import {
  backgroundLane,
  commitStepPointer,
  deferToCommit,
  INLINE_CHECKPOINT_PREFIX,
  insertInlineCheckpoint,
  isInlineCheckpointKey,
  lockEndingStep,
  insertItems,
  markIncorporated,
  withTransaction,
  type RunItem,
  type Services,
} from '../../runtime/index.js';

export interface StepCommit {
  runId: string;
  threadId: string;
  attemptId: string;
  seq: number;
  state: Uint8Array;
  nextOrdinal: number;
  usage: object;
  items: RunItem[];
  incorporatedEntryIds: string[];
}

export type CommitOutcome = { ok: true; previousKey: string | null } | { ok: false };

export function checkpointKey(runId: string, seq: number, attemptId: string): string {
  return `runs/${runId}/checkpoints/${String(seq).padStart(6, '0')}-${attemptId}.msgpack`;
}

/**
 * Commits one step (RUNS.md invariant 3): the checkpoint object is written first, then one
 * transaction moves the run's checkpoint pointer, next ordinal and display position, inserts
 * the step's completed items and marks the steer entries it incorporated. The pointer update
 * is fenced by the attempt id (invariant 2): when it matches no row the lease is lost, nothing
 * of the step is written, and the caller must abort the attempt. The replaced checkpoint
 * object is only released to the cleanup outbox after the new pointer committed (invariant 5).
 */
export async function commitStep(services: Services, step: StepCommit, onReplaced: (tx: import('pg').PoolClient, key: string) => Promise<void>): Promise<CommitOutcome> {
  const key = await writeCheckpoint(services, step);
  // Background lane (PoolLane): the step's deltas are already on the stream; a request waits first.
  return withTransaction(backgroundLane(services.pool), (tx) => commitStepIn(tx, step, key, onReplaced));
}

/**
 * Where the step's checkpoint goes; returns the key the pointer will name. Up to
 * objects.inline_checkpoint_max_bytes it is stored inline (the `inline:` key; the bytes are
 * inserted by commitStepIn in the step's own transaction, so the pointer and the state commit
 * together and cost no object write). Larger: the object is written here, before any
 * transaction that points to it, so a committed pointer never names a missing object.
 */
export async function writeCheckpoint(services: Services, step: StepCommit): Promise<string> {
  const key = checkpointKey(step.runId, step.seq, step.attemptId);
  if (step.state.byteLength <= services.config.objects.inline_checkpoint_max_bytes) return `${INLINE_CHECKPOINT_PREFIX}${key}`;
  await services.objects.put(key, step.state, { contentType: 'application/x-msgpack' });
  return key;
}

/**
 * The transactional half of a step commit, in the caller's transaction: the run's own step
 * transaction (commitStep), or the seal's when the step is the run's last (the final step, its
 * seal and the thread's advance then commit together — one commit instead of two, with the same
 * fencing: a step fenced out returns ok false before writing anything).
 */
export async function commitStepIn(tx: import('pg').PoolClient, step: StepCommit, key: string, onReplaced: (tx: import('pg').PoolClient, key: string) => Promise<void>): Promise<CommitOutcome> {
  const moved = await commitStepPointer(tx, step.runId, step.attemptId, { checkpoint_seq: step.seq, checkpoint_key: key, next_ordinal: step.nextOrdinal, usage: step.usage });
  if (!moved) return { ok: false } as const;
  // A retry of a step whose commit went through (its acknowledgement was lost): done already.
  if (moved === 'committed') return { ok: true, previousKey: null } as const;
  // Written only once the fence passed: a fenced-out step leaves no row behind. Nothing reads
  // their answers, so they travel with what the transaction issues next (the seal's statements,
  // or the COMMIT): any of them failing rolls the whole step back at the commit.
  if (isInlineCheckpointKey(key)) deferToCommit(tx, () => insertInlineCheckpoint(tx, key, step.runId, step.state));
  deferToCommit(tx, () => insertItems(tx, step.runId, step.items));
  deferToCommit(tx, () => markIncorporated(tx, step.threadId, step.incorporatedEntryIds, step.runId, step.seq));
  const previousKey = moved.previous_key;
  if (previousKey) deferToCommit(tx, () => onReplaced(tx, previousKey));
  return { ok: true, previousKey: moved.previous_key } as const;
}

/**
 * The last step of a run that ends (completed, failed, cancelled), in its seal's transaction:
 * its items commit as commitStepIn's do (RUNS.md 3: in one transaction, fenced by the attempt:
 * lockEndingStep holds the run's row), its next ordinal and display position with the seal's
 * own update (the seal's change carries `ending_step`), but its checkpoint is not stored —
 * nothing continues an ended run — and the checkpoint the run pointed to is released with the
 * pointer cleared, so an ended run keeps no checkpoint at all (no row, no object).
 */
export async function commitEndingStepIn(tx: import('pg').PoolClient, step: StepCommit, onReplaced: (tx: import('pg').PoolClient, key: string) => Promise<void>): Promise<boolean> {
  const moved = await lockEndingStep(tx, step.runId, step.attemptId);
  if (!moved) return false;
  deferToCommit(tx, () => insertItems(tx, step.runId, step.items));
  deferToCommit(tx, () => markIncorporated(tx, step.threadId, step.incorporatedEntryIds, step.runId, step.seq));
  const previousKey = moved.previous_key;
  if (previousKey) deferToCommit(tx, () => onReplaced(tx, previousKey));
  return true;
}
