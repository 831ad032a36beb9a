// The attempt protocol: typed messages between the worker host (main thread, owns PostgreSQL,
// Redis and the object store) and an attempt (a Piscina task in a worker thread, which owns
// none of them). Every message is a TypeBox union tagged by `type`; errors cross the thread
// boundary as {code, message}. The attempt is finished by its terminal `done` message, never
// by the task promise alone (the promise can resolve before the last port messages are read).
import { Type, type Static } from '@sinclair/typebox';

const Json = Type.Unknown();
const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** A conversation message, as the model adapters take it (runtime/providers/model-adapters ModelMessage). */
export const HistoryMessage = JsonObject;

export const ItemKind = Type.Union([
  Type.Literal('user_message'),
  Type.Literal('text_message'),
  Type.Literal('reasoning'),
  Type.Literal('tool_call'),
  Type.Literal('tool_result'),
  Type.Literal('output'),
  Type.Literal('notice'),
  /** A reviewer's verdict on one tool call (reviewer.ts), so a UI can show why it was denied. */
  Type.Literal('review'),
  /** Older turns replaced by a summary to fit the context window (context/compaction.ts). */
  Type.Literal('compaction'),
]);
export type ItemKind = Static<typeof ItemKind>;

export const ItemBody = Type.Object({ id: Type.String(), kind: ItemKind, content: JsonObject });
export type ItemBody = Static<typeof ItemBody>;

export const ModelTarget = Type.Object({
  api: Type.String(),
  base_url: Type.String(),
  api_key: Type.Optional(Type.String()),
  /** How api_key is sent when it is not the protocol's own scheme (Azure `api-key`, a Vertex access token as `bearer`). */
  auth: Type.Optional(Type.Union([Type.Literal('bearer'), Type.Literal('api-key'), Type.Literal('x-api-key'), Type.Literal('x-goog-api-key')])),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  aws: Type.Optional(JsonObject),
  /** Gemini on Vertex AI paths (runtime/providers/model-adapters ModelEndpoint.vertex). */
  vertex: Type.Optional(Type.Object({ project_id: Type.Optional(Type.String()), location: Type.Optional(Type.String()) })),
  /** The vendor's model name. */
  model: Type.String(),
  settings: JsonObject,
});
export type ModelTarget = Static<typeof ModelTarget>;

/** A skill pinned with the run, as the host read it from its package (SKILL.md front matter). */
export const SkillSummary = Type.Object({
  skill_id: Type.String(),
  revision_id: Type.String(),
  /** The name the model uses in read_skill_file: the front matter's name, else the skill's name. */
  name: Type.String(),
  description: Type.String(),
  /** Paths of the package's files, so the model can be told what it may read. */
  files: Type.Array(Type.String()),
});
export type SkillSummary = Static<typeof SkillSummary>;

/**
 * What the host resolved for the attempt's server tools before it started (TOOLS.md "One
 * shape"): per family, the provider endpoints and decrypted credentials for this attempt only,
 * and read-only facts about pinned resources. Families add a key each; an absent key means the
 * family has nothing for this run.
 */
export const ToolResources = Type.Object({
  skills: Type.Optional(Type.Array(SkillSummary)),
  /** Per tool family, as that family's resource preparer on the host defines it. */
  families: Type.Optional(Type.Record(Type.String(), Json)),
});
export type ToolResources = Static<typeof ToolResources>;

/**
 * The model's context limits in effect (README "Context management"): the window in tokens and
 * two fractions of it. The host resolves them (runtime effectiveContextLimits).
 */
export const ContextLimits = Type.Object({
  context_window_tokens: Type.Integer({ minimum: 1 }),
  compact_threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  proactive_context_management_threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
});
export type ContextLimits = Static<typeof ContextLimits>;

export const Failure = Type.Object({ code: Type.String(), message: Type.String() });
export type Failure = Static<typeof Failure>;

/**
 * What the run's model understands of media (README "Sending media"): spec 2.12 capabilities
 * (image_input, pdf_input, audio_input, video_input) and limits, resolved by the host from the
 * model record's characteristics, else from discovery.
 */
export const MediaTraits = Type.Object({
  capabilities: Type.Array(Type.String()),
  image_input: Type.Optional(
    Type.Object({
      image_split_max_height: Type.Integer({ minimum: 1 }),
      image_split_overlap: Type.Integer({ minimum: 0 }),
      max_image_bytes: Type.Integer({ minimum: 1 }),
      max_image_dimension: Type.Integer({ minimum: 1 }),
      max_images: Type.Integer({ minimum: 1 }),
      split_large_images: Type.Boolean(),
      support_gif: Type.Boolean(),
    }),
  ),
  max_video_bytes: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type MediaTraits = Static<typeof MediaTraits>;

/** A media_understanding model (config media_understanding.<kind>) as the host resolved it. */
export const MediaModel = Type.Object({ key: Type.String(), target: ModelTarget, traits: MediaTraits });
export type MediaModel = Static<typeof MediaModel>;

/** Facts of an asset named by an input the host did not store itself (a resume batch, kept verbatim). */
export const AssetFacts = Type.Object({ media_type: Type.String(), name: Type.String(), size_bytes: Type.Integer({ minimum: 0 }) });
export type AssetFacts = Static<typeof AssetFacts>;

/** Host → attempt: everything the attempt needs; it reads nothing else. */
export const AttemptStart = Type.Object({
  type: Type.Literal('start'),
  run: Type.Object({
    id: Type.String(),
    workspace_id: Type.String(),
    thread_id: Type.String(),
    attempt_id: Type.String(),
    attempt_number: Type.Integer(),
    input: JsonObject,
    options: JsonObject,
  }),
  /** The agent configuration with the run's overrides applied (spec 2.4 shape). */
  config: JsonObject,
  model: ModelTarget,
  /**
   * The reviewer's model (config.reviewer.model resolved by the host). Absent: the reviewer
   * uses `model`. Null: it could not be resolved (reviewer_model_error says why); the attempt
   * still runs and every review follows reviewer.on_error.
   */
  reviewer_model: Type.Optional(Type.Union([ModelTarget, Type.Null()])),
  reviewer_model_error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  /** The thread's conversation before this run (from earlier runs). */
  history: Type.Array(HistoryMessage),
  /**
   * That conversation as JSON text, in place of `history` (then empty): the host passes the text
   * it read from PostgreSQL and the attempt parses it on its own thread (attempt.task.ts), so a
   * long history (1 MB at 2,000 messages) is neither parsed nor structured-cloned on the host's.
   */
  history_json: Type.Optional(Type.String()),
  /** The last committed checkpoint (msgpack), or null on the first attempt. */
  checkpoint: Type.Union([Type.Uint8Array(), Type.Null()]),
  checkpoint_seq: Type.Integer(),
  /** First ordinal this attempt may use (continues after the committed items). */
  next_ordinal: Type.Integer({ minimum: 1 }),
  /** Resume batch (successor runs of a waiting run), stored verbatim on the run. */
  resume: Type.Union([JsonObject, Type.Null()]),
  limits: Type.Object({ max_requests: Type.Union([Type.Integer(), Type.Null()]), model_timeout_ms: Type.Integer() }),
  /** Absent: no server tool needs anything from the host (tests and runs without such tools). */
  tool_resources: Type.Optional(ToolResources),
  /** Plain-http origins the endpoint policy allows (config providers.allowed_http_origins). */
  allowed_http_origins: Type.Optional(Type.Array(Type.String())),
  /** The model's context limits in effect (config, then the model record, then discovery). */
  context: ContextLimits,
  /** Media the run's model understands. Absent: none (tests without media). */
  media: Type.Optional(MediaTraits),
  /**
   * media_understanding models by kind (image, audio, video). Null: configured but unusable
   * (media_model_errors says why); a part that needs it then fails the run with that reason.
   */
  media_models: Type.Optional(Type.Record(Type.String(), Type.Union([MediaModel, Type.Null()]))),
  media_model_errors: Type.Optional(Type.Record(Type.String(), Failure)),
  /** Facts of the assets a resume batch names, by asset id. */
  asset_facts: Type.Optional(Type.Record(Type.String(), AssetFacts)),
});
export type AttemptStart = Static<typeof AttemptStart>;

export const SteerEntry = Type.Object({ id: Type.String(), content: Type.Array(JsonObject) });
export type SteerEntry = Static<typeof SteerEntry>;

/** Host → attempt while it runs. */
export const HostMessage = Type.Union([
  /** Stop at once (cancel): abort the model stream, answer done cancelled. */
  Type.Object({ type: Type.Literal('cancel') }),
  /** Drain: finish the current step, send its checkpoint, answer done handoff. */
  Type.Object({ type: Type.Literal('drain') }),
  /** Steer entries joining the run before its next model request. */
  Type.Object({ type: Type.Literal('steer'), entries: Type.Array(SteerEntry) }),
  /** The answer to one host.request: `result` when ok, else `error` ({code, message}). */
  Type.Object({ type: Type.Literal('host.response'), id: Type.Integer(), ok: Type.Boolean(), result: Type.Optional(Json), error: Type.Optional(Failure) }),
]);
export type HostMessage = Static<typeof HostMessage>;

export const Usage = Type.Object({
  requests: Type.Integer(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  /** Reviewer model requests (their tokens are in input/output_tokens; they are not in `requests`). */
  review_requests: Type.Optional(Type.Integer()),
  /** Summarising requests of context compaction (tokens in input/output_tokens; not in `requests`). */
  compaction_requests: Type.Optional(Type.Integer()),
  /** Requests of media_understanding models (descriptions, transcriptions); not in `requests`. */
  media_requests: Type.Optional(Type.Integer()),
});
export type Usage = Static<typeof Usage>;

export const PendingCall = Type.Object({ tool_call_id: Type.String(), tool_name: Type.String(), arguments: JsonObject, presentation: JsonObject });
export type PendingCall = Static<typeof PendingCall>;

/** Attempt → host. */
export const AttemptMessage = Type.Union([
  /**
   * A request for something only the host may do (read or write the service's own state:
   * PostgreSQL, the object store). Answered by one host.response with the same id. The host
   * fences every such request by this attempt's lease (RUNS.md invariant 2): a request of an
   * attempt that lost its lease is answered with error `lease_lost`.
   */
  Type.Object({ type: Type.Literal('host.request'), id: Type.Integer({ minimum: 1 }), op: Type.String(), args: JsonObject }),
  Type.Object({ type: Type.Literal('item.started'), ordinal: Type.Integer(), item: ItemBody }),
  Type.Object({ type: Type.Literal('item.delta'), ordinal: Type.Integer(), delta: Type.Object({ text: Type.Optional(Type.String()), arguments: Type.Optional(Type.String()) }) }),
  Type.Object({ type: Type.Literal('item.completed'), ordinal: Type.Integer(), item: ItemBody }),
  /**
   * A step boundary: the host commits every item with ordinal < next_ordinal together with
   * this checkpoint in one transaction. All those items must have been completed.
   */
  Type.Object({
    type: Type.Literal('checkpoint'),
    seq: Type.Integer({ minimum: 1 }),
    state: Type.Uint8Array(),
    next_ordinal: Type.Integer({ minimum: 1 }),
    usage: Usage,
    /** Steer entries this checkpoint incorporated (their incorporated_checkpoint_seq = seq). */
    incorporated_entry_ids: Type.Array(Type.String()),
  }),
  Type.Object({
    type: Type.Literal('done'),
    outcome: Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled'), Type.Literal('waiting'), Type.Literal('handoff')]),
    output: Type.Optional(Json),
    failure: Type.Optional(Failure),
    wait_reason: Type.Optional(Type.Union([Type.Literal('approval'), Type.Literal('client_tool'), Type.Literal('user_question'), Type.Literal('subagent')])),
    pending: Type.Optional(Type.Object({ approvals: Type.Array(PendingCall), calls: Type.Array(PendingCall) })),
    /** Messages this run adds to the thread's history (on completed / waiting). */
    history_append: Type.Optional(Type.Array(HistoryMessage)),
    usage: Usage,
  }),
]);
export type AttemptMessage = Static<typeof AttemptMessage>;
export type DoneMessage = Extract<AttemptMessage, { type: 'done' }>;

/**
 * One post on the port, attempt → host: a single AttemptMessage, or a `batch` of the messages
 * the attempt posted in one event-loop turn, in the order it posted them (one structured clone
 * and one wake-up of the host thread instead of one per message). The host handles a batch's
 * messages exactly as if each had come alone (forEachAttemptMessage).
 */
export const AttemptPost = Type.Union([AttemptMessage, Type.Object({ type: Type.Literal('batch'), messages: Type.Array(AttemptMessage, { minItems: 2 }) })]);
export type AttemptPost = Static<typeof AttemptPost>;

/** Calls `handle` for each message of a post, in order. */
export function forEachAttemptMessage(post: AttemptPost, handle: (message: AttemptMessage) => void): void {
  if (post.type === 'batch') for (const message of post.messages) handle(message);
  else handle(post);
}

/** The message that hands an attempt thread's link to the host, over the thread's parentPort (attempt-link.ts). */
export const ATTEMPT_LINK = 'attempt.link';

/**
 * What crosses a link, both ways: one attempt's AttemptPost or HostMessage under the channel
 * number its task was given. `message` null (attempt → host only): the channel's hello, which
 * binds the channel to the link and carries nothing.
 */
export interface LinkMessage {
  channel: number;
  message: unknown;
}
