import {
  AppError,
  buildKnownModelIndex,
  effectiveContextLimits,
  effectiveMediaTraits,
  getAssets,
  isInlineCheckpointKey,
  readInlineCheckpoint,
  getThreadHistoryText,
  JsonArrayText,
  type JsonArray,
  mediaAssetIds,
  mediaFacts,
  type RunRow,
  type Services,
} from '../../runtime/index.js';
import type { AssetFacts, AttemptStart, MediaModel } from '../attempt/index.js';
import { modelTarget, resolveRunModel, runModelKey, type ModelSources } from './run-models.js';
import { prepareToolResources, type PrepareContext } from './tool-resources/index.js';

const MODEL_TIMEOUT_MS = 120_000;

/**
 * Gathers everything the attempt needs, since it reads nothing itself: the model resolved now
 * (a disabled model or provider refuses new use at once), the decrypted credential for this
 * attempt only, the last committed checkpoint, and the thread's history before this run.
 * `knownHistory`: that history as the transaction that created and claimed the run read it
 * under the thread lock (an inbox POST reads it for its response); used when its length is the
 * run's history_start, else the thread is read. A history held as PostgreSQL's text goes to the
 * attempt as that text (history_json), parsed on the attempt's thread, not this one.
 */
export async function prepareAttempt(services: Services, models: ModelSources, run: RunRow, prepare: PrepareContext, knownHistory?: JsonArray): Promise<AttemptStart> {
  const config = run.config;
  const modelKey = runModelKey(run);
  // Independent reads, issued together: they sit on the path from claim to the first token.
  const [resolved, reviewer, checkpoint, thread, toolResources, media, assetFacts] = await Promise.all([
    resolveRunModel(services, models, run.workspace_id, modelKey),
    resolveReviewerModel(services, models, run, modelKey),
    loadCheckpoint(services, run),
    // The thread's history as the run started: history_start is its length then, and only the
    // seal of the thread's current run (this one) appends to it, so a run that started on an
    // empty history (a conversation's first input) needs no read.
    // A history handed over by the claiming transaction is that same prefix: the run's thread
    // is locked to it (current_run_id) from that commit until its seal.
    run.history_start === 0 ? null : knownHistory?.length === run.history_start ? knownHistory : readHistory(services, run),
    prepareToolResources(services, models.registry, run, prepare),
    resolveMediaModels(services, models, run),
    resumeAssetFacts(services, run),
  ]);
  const index = buildKnownModelIndex();
  const maxRequests = (run.options.max_usage as { requests?: number } | undefined)?.requests ?? null;
  return {
    type: 'start',
    run: { id: run.id, workspace_id: run.workspace_id, thread_id: run.thread_id, attempt_id: run.current_attempt_id!, attempt_number: run.attempts, input: run.input, options: run.options },
    config,
    model: modelTarget(resolved),
    ...reviewer,
    ...(thread instanceof JsonArrayText ? { history: [], history_json: thread.text } : { history: thread ? [...thread] : [] }),
    checkpoint,
    checkpoint_seq: run.checkpoint_seq,
    next_ordinal: run.next_ordinal,
    resume: run.resume,
    limits: { max_requests: maxRequests, model_timeout_ms: MODEL_TIMEOUT_MS },
    tool_resources: toolResources,
    allowed_http_origins: [...services.config.providers.allowed_http_origins],
    // The agent's (or the run's override of) model_characteristics win over the model record's
    // characteristics, which win over what discovery knows about the vendor model name.
    context: effectiveContextLimits(index, resolved.model.model, resolved.model.characteristics, config.model_characteristics as Record<string, unknown> | undefined),
    media: effectiveMediaTraits(index, resolved.model.model, resolved.model.characteristics),
    ...media,
    ...(Object.keys(assetFacts).length > 0 ? { asset_facts: assetFacts } : {}),
  };
}

/**
 * The run's history when the claim did not hand it over: what this process holds of it, and the
 * rest read. A held prefix of exactly history_start messages IS that history, with no read: a
 * thread's history only grows at its end (HistoryPrefixes), so its first history_start messages
 * are what they were when the run started. The common case for a worker that sealed the thread's
 * previous run (the seal remembers what it appended).
 */
async function readHistory(services: Services, run: RunRow): Promise<JsonArrayText | null> {
  const held = services.histories.get(run.thread_id);
  if (held !== undefined && held.count === run.history_start) return new JsonArrayText(held.text, held.count);
  const history = await getThreadHistoryText(services.pool, run.workspace_id, run.thread_id, held);
  if (history) services.histories.remember(run.thread_id, history);
  return history;
}

/**
 * The media_understanding models (config media_understanding.{image,audio,video}), resolved like
 * the reviewer's: a model that cannot be used does not stop the run; the attempt gets null and
 * the reason, and fails only if a part of the run needs that model.
 */
async function resolveMediaModels(services: Services, sources: ModelSources, run: RunRow): Promise<Pick<AttemptStart, 'media_models' | 'media_model_errors'>> {
  const configured = (run.config.media_understanding as Record<string, unknown> | undefined) ?? {};
  const entries = Object.entries(configured).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '');
  if (entries.length === 0) return {};
  const models: Record<string, MediaModel | null> = {};
  const errors: Record<string, { code: string; message: string }> = {};
  const index = buildKnownModelIndex();
  await Promise.all(
    entries.map(async ([kind, key]) => {
      try {
        const resolved = await resolveRunModel(services, sources, run.workspace_id, key);
        models[kind] = { key, target: modelTarget(resolved), traits: effectiveMediaTraits(index, resolved.model.model, resolved.model.characteristics) };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        models[kind] = null;
        errors[kind] = { code: err.code, message: `media_understanding.${kind} (${key}): ${err.message}` };
      }
    }),
  );
  return { media_models: models, ...(Object.keys(errors).length > 0 ? { media_model_errors: errors } : {}) };
}

/** Facts of the assets a resume batch's input names (the batch is stored verbatim, without them). */
async function resumeAssetFacts(services: Services, run: RunRow): Promise<Record<string, AssetFacts>> {
  const ids = mediaAssetIds((run.resume?.input as { content?: unknown } | undefined)?.content);
  if (ids.length === 0) return {};
  const assets = await getAssets(services.pool, run.workspace_id, ids);
  return Object.fromEntries(assets.map((a) => [a.id, mediaFacts(a)]));
}

async function loadCheckpoint(services: Services, run: RunRow): Promise<Uint8Array | null> {
  if (!run.checkpoint_key) return null;
  // Inline (migration 0016) or an object: a run checkpointed by an earlier release still resumes.
  const checkpoint = isInlineCheckpointKey(run.checkpoint_key) ? await readInlineCheckpoint(services.pool, run.checkpoint_key) : await services.objects.get(run.checkpoint_key);
  if (!checkpoint) throw new AppError('internal', `checkpoint ${run.checkpoint_key} of run ${run.id} is missing from the object store`);
  return checkpoint;
}

/**
 * The reviewer's own model (config.reviewer.model), when it names another model than the run's;
 * nothing when it does not (the attempt then reviews with the run's model). A model that cannot
 * be used (missing, disabled, refused endpoint) does not stop the run: the attempt gets null and
 * the reason, and every review follows reviewer.on_error.
 */
async function resolveReviewerModel(services: Services, models: ModelSources, run: RunRow, runModelKey: string): Promise<Pick<AttemptStart, 'reviewer_model' | 'reviewer_model_error'>> {
  const key = (run.config.reviewer as { model?: unknown } | null | undefined)?.model;
  if (typeof key !== 'string' || key === '' || key === runModelKey) return {};
  try {
    const resolved = await resolveRunModel(services, models, run.workspace_id, key);
    return { reviewer_model: modelTarget(resolved) };
  } catch (err) {
    if (!(err instanceof AppError)) throw err; // a database failure is not the reviewer's: the attempt cannot start
    return { reviewer_model: null, reviewer_model_error: { code: err.code, message: err.message } };
  }
}
