import { Type } from '@sinclair/typebox';
import { ItemKind } from '../../actors/index.js';
import { Labels, NullableTimestamp, Timestamp } from './common.js';

const Any = Type.Record(Type.String(), Type.Unknown());
const Str = Type.Union([Type.String(), Type.Null()]);

export const TextContent = Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: 1_000_000 }) }, { additionalProperties: false });
export const MediaContent = Type.Object(
  {
    type: Type.Union([Type.Literal('image'), Type.Literal('audio'), Type.Literal('video'), Type.Literal('file')], {
      description: "the asset's kind (GET /assets/{id} `kind`): image, audio, video, or file (PDF, text)",
    }),
    asset_id: Type.String({ minLength: 1, maxLength: 128, description: 'an asset of the workspace that is not retired (404 unknown, 409 retired)' }),
  },
  { additionalProperties: false, description: 'a media part: stored entries add the asset\'s media_type, name and size_bytes' },
);
export const InputPayload = Type.Object({ content: Type.Array(Type.Union([TextContent, MediaContent]), { minItems: 1, maxItems: 100 }) }, { additionalProperties: false });

export const SessionView = Type.Object(
  { id: Type.String(), workspace_id: Type.String(), labels: Labels, created_by_id: Str, created_at: Timestamp, updated_at: Timestamp, version: Type.Integer() },
  { $id: 'Session' },
);

// The thread's fields around its history, shared by the resource view and the stream's view.
const threadHead = {
  id: Type.String(),
  workspace_id: Type.String(),
  session_id: Type.String(),
  labels: Labels,
  current_run_id: Str,
  last_run_id: Str,
  origin: Type.String(),
  origin_run_id: Str,
  origin_thread_id: Str,
  origin_tool_call_id: Str,
  subagent: Str,
  mcp_headers: Type.Record(Type.String(), Type.Record(Type.String(), Type.String())),
};
const threadTail = { archived_at: NullableTimestamp, created_at: Timestamp, updated_at: Timestamp, version: Type.Integer() };

export const ThreadView = Type.Object({ ...threadHead, message_history: Type.Array(Any), ...threadTail }, { $id: 'Thread' });

/** The thread as a thread.changed stream event carries it: no message_history (it can be megabytes), its length instead. */
export const ThreadStreamView = Type.Object(
  {
    ...threadHead,
    message_count: Type.Integer({ minimum: 0, description: 'how many messages message_history holds; GET /threads/{id} for the history itself' }),
    ...threadTail,
  },
  { $id: 'ThreadStreamView', description: 'the thread without message_history, with message_count (GET /threads/{id} for the history)' },
);

export const InboxEntryView = Type.Object(
  {
    id: Type.String(),
    thread_id: Type.String(),
    kind: Type.String(),
    delivery: Type.String(),
    status: Type.String({ description: 'pending, assigned, incorporated, completed, failed or withdrawn' }),
    position: Type.Integer(),
    payload: Any,
    options: Any,
    agent_id: Type.String(),
    agent_revision_id: Str,
    principal_id: Str,
    origin_run_id: Str,
    assigned_run_id: Str,
    child_run_id: Str,
    incorporated_checkpoint_seq: Type.Union([Type.Integer(), Type.Null()]),
    failure: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    request_key: Str,
    created_at: Timestamp,
    finished_at: NullableTimestamp,
  },
  { $id: 'InboxEntry' },
);

export const RunView = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    session_id: Type.String(),
    thread_id: Type.String(),
    agent_id: Type.String(),
    agent_revision_id: Type.String(),
    revision_selection: Type.String(),
    status: Type.String({ description: 'accepted, running, waiting, completed, failed or cancelled' }),
    wait_reason: Str,
    trigger: Type.String(),
    lineage: Type.String(),
    parent_run_id: Str,
    source_entry_id: Str,
    principal_id: Str,
    resumed_by_id: Str,
    attempts: Type.Integer(),
    max_attempts: Type.Integer(),
    current_attempt_id: Str,
    created_at: Timestamp,
    started_at: NullableTimestamp,
    sealed_at: NullableTimestamp,
    cancel_requested_at: NullableTimestamp,
    updated_at: Timestamp,
    display_position: Type.String(),
    labels: Labels,
    input: Any,
    output: Type.Unknown(),
    failure: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
    environment_mounts: Type.Array(Any),
    memory_mounts: Type.Array(
      Type.Object({
        memory_id: Type.String(),
        name: Type.String({ description: "what the model calls the memory by (default: the memory's name)" }),
        access: Type.Union([Type.Literal('read'), Type.Literal('read_write')]),
        recall: Type.Boolean(),
      }),
      { description: "the agent configuration's memory_mounts with the run options' on top, resolved when the run was created" },
    ),
    options: Any,
    pending: Type.Object({ approvals: Type.Array(Any), calls: Type.Array(Any) }),
    resume: Type.Union([Any, Type.Null()]),
    usage_at_seal: Type.Union([Any, Type.Null()]),
    version: Type.Integer(),
  },
  { $id: 'Run' },
);

export const EntryRunThread = Type.Object({ entry: InboxEntryView, run: Type.Union([RunView, Type.Null()]), thread: ThreadView });

export const RunItemView = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union(ItemKind.anyOf, {
      description:
        'what the item is. `compaction` (README "Context management"): older turns were replaced by a summary; content {trigger: threshold|context_overflow, summary, replaced_messages, replaced_tool_call_ids, kept_messages, tokens_before, tokens_after, context_window_tokens, compact_threshold, counting, usage: {input_tokens, output_tokens}, error?}',
    }),
    state: Type.String({ description: 'in_progress (tail) or completed' }),
    ordinal: Type.Integer({ minimum: 1 }),
    content: Any,
    content_refs: Any,
    first_stream_id: Str,
    last_stream_id: Str,
    started_at: NullableTimestamp,
    ended_at: NullableTimestamp,
  },
  { $id: 'RunItem' },
);

export const ItemsPage = Type.Object(
  {
    items: Type.Array(RunItemView),
    baseline: Type.Boolean({ description: 'true for the default page (newest items with the live tail)' }),
    complete: Type.Boolean({ description: 'the run is sealed and this page reaches its last item' }),
    position: Type.String(),
    resume_after: Type.String({ description: 'subscribe to the thread stream after this id to continue without loss' }),
    run: RunView,
    continuation: Any,
  },
  { $id: 'ItemsPage' },
);
