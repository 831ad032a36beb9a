// The agent loop's durable state: what a checkpoint holds (msgpack) and what a later attempt,
// or the successor of a waiting run, continues from. Where the loop stands is read from the
// messages themselves (open tool calls, a final answer), so the state needs no step cursor.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { Packr } from 'msgpackr';
import { checkSchema, ContentPart, ModelMessage } from '../../runtime/providers/model-adapters/index.js';
import { PendingCall, Usage, type AssetFacts, type AttemptStart } from './attempt-protocol.js';
import { contentParts } from './conversation.js';

export const ReturnedCall = Type.Object({ status: Type.String(), value: Type.Unknown() });
export type ReturnedCall = Static<typeof ReturnedCall>;

export const Pending = Type.Object({ approvals: Type.Array(PendingCall), calls: Type.Array(PendingCall) });
export type Pending = Static<typeof Pending>;

export const AgentState = Type.Object({
  version: Type.Literal(1),
  /** The run that wrote the state; another run reading it is the successor of a waiting run. */
  run_id: Type.String(),
  /** The whole conversation: thread history, then what this run (and its lineage) added. */
  messages: Type.Array(ModelMessage),
  /** messages[history_start…] are this run's additions (done.history_append). */
  history_start: Type.Integer({ minimum: 0 }),
  /** Model responses received by this run. */
  steps: Type.Integer({ minimum: 0 }),
  usage: Usage,
  /** Re-asks made after an invalid structured output. */
  output_retries: Type.Integer({ minimum: 0 }),
  /** Consecutive tool calls that ended in an error (reset by a success). */
  tool_errors: Type.Integer({ minimum: 0 }),
  /** Approval decisions received (resume batches), by tool_call_id. */
  approvals: Type.Record(Type.String(), Type.Union([Type.Literal('approve'), Type.Literal('deny')])),
  /** Client tool / user question results received but not yet fed back, by tool_call_id. */
  returned: Type.Record(Type.String(), ReturnedCall),
  /** The resume batch's user input, appended once every open call is answered. */
  queued_input: Type.Union([Type.Array(ContentPart), Type.Null()]),
  /** What the run waits for (set with the waiting checkpoint, cleared on continuation). */
  pending: Type.Union([Pending, Type.Null()]),
  /** Steer entries already in `messages` (a re-delivered entry is not applied twice). */
  incorporated_steer_ids: Type.Array(Type.String()),
  /** First unused ordinal when the state was written. */
  next_ordinal: Type.Integer({ minimum: 1 }),
  /** The accepted final output: the run only has to report it. */
  final: Type.Union([Type.Object({ output: Type.Unknown() }), Type.Null()]),
  /**
   * Deferred tools the model revealed (deferred loading): a later attempt, or a successor,
   * reveals them again before its first model request. Optional: older checkpoints lack it.
   */
  revealed_tools: Type.Optional(Type.Array(Type.String())),
  /**
   * Context management (context/context-manager.ts). Optional, so a checkpoint written before
   * it existed still loads. `fresh`: a compaction happened and no model response came since;
   * an overflow then fails the run instead of compacting again.
   */
  context: Type.Optional(Type.Object({ compactions: Type.Integer({ minimum: 0 }), fresh: Type.Boolean() })),
});
export type AgentState = Static<typeof AgentState>;

export function emptyUsage(): Usage {
  return { requests: 0, input_tokens: 0, output_tokens: 0 };
}

/** The first attempt's state: thread history then the run input (emitted by the loop as an item). */
export function initialState(start: AttemptStart): AgentState {
  return {
    version: 1,
    run_id: start.run.id,
    messages: start.history as ModelMessage[], // the host keeps history in ModelMessage shape; the adapter validates it
    history_start: start.history.length,
    steps: 0,
    usage: emptyUsage(),
    output_retries: 0,
    tool_errors: 0,
    approvals: {},
    returned: {},
    queued_input: null,
    pending: null,
    incorporated_steer_ids: [],
    next_ordinal: start.next_ordinal,
    final: null,
  };
}

/**
 * A successor run continues from its waiting predecessor's checkpoint: same conversation, fresh
 * per-run counters, and the resume batch folded in as decisions and results to feed back.
 */
export function adoptForSuccessor(previous: AgentState, start: AttemptStart): AgentState {
  const resume = readResume(start.resume, start.asset_facts);
  return {
    ...previous,
    run_id: start.run.id,
    history_start: previous.messages.length,
    steps: 0,
    usage: emptyUsage(),
    output_retries: 0,
    tool_errors: 0,
    approvals: { ...previous.approvals, ...resume.approvals },
    returned: { ...previous.returned, ...resume.returned },
    queued_input: resume.input,
    pending: null,
    incorporated_steer_ids: [],
    next_ordinal: start.next_ordinal,
    final: null,
  };
}

interface ResumeBatch {
  approvals: AgentState['approvals'];
  returned: AgentState['returned'];
  input: ContentPart[] | null;
}

/** The resume batch (spec 2.5): approvals {id: {action}}, calls {id: {status, value}}, input {content}. */
export function readResume(raw: Record<string, unknown> | null, facts: Readonly<Record<string, AssetFacts>> = {}): ResumeBatch {
  const batch: ResumeBatch = { approvals: {}, returned: {}, input: null };
  for (const [id, decision] of entries(raw?.approvals)) {
    // Anything but an explicit approve is a denial: a tool runs only when someone said so.
    batch.approvals[id] = (decision as { action?: unknown } | null)?.action === 'approve' ? 'approve' : 'deny';
  }
  for (const [id, result] of entries(raw?.calls)) {
    const r = (result ?? {}) as { status?: unknown; value?: unknown };
    batch.returned[id] = { status: typeof r.status === 'string' ? r.status : 'returned', value: r.value ?? null };
  }
  const input = raw?.input as { content?: unknown } | undefined;
  const parts = contentParts(input?.content, facts);
  if (parts.length > 0) batch.input = parts;
  return batch;
}

function entries(value: unknown): Array<[string, unknown]> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.entries(value) : [];
}

// One codec per worker thread (module state is per thread under Piscina), shared by the
// thread's attempts: encode copies its bytes out of the Packr's reused buffer before returning
// and decode is synchronous, so no attempt sees another's bytes; a Packr per attempt was built
// and warmed again for every run.
let sharedCodec: StateCodec | null = null;

export function sharedStateCodec(): StateCodec {
  sharedCodec ??= new StateCodec();
  return sharedCodec;
}

/** msgpack codec of the state (a Packr keeps a reusable buffer). */
export class StateCodec {
  private readonly packr = new Packr({ useRecords: false });

  /** Bytes that own their ArrayBuffer, so they can be transferred to the host. */
  encode(state: AgentState): Uint8Array {
    const view = this.packr.pack(state);
    // pack() returns a view into the Packr's reused buffer; the next pack would overwrite it.
    const owned = new Uint8Array(view.byteLength);
    owned.set(view);
    return owned;
  }

  decode(bytes: Uint8Array): AgentState {
    const value: unknown = this.packr.unpack(bytes);
    if (!checkSchema(AgentState, value)) {
      const first = Value.Errors(AgentState, value).First();
      throw new CheckpointError(`the checkpoint does not hold an agent state (${first?.path || '/'}: ${first?.message ?? 'invalid'})`);
    }
    return value;
  }
}

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
}
