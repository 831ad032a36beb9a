// The agent loop of one attempt. Each pass looks at the state and does the one next thing:
// report the accepted answer, hand off on drain, answer open tool calls (or wait for them),
// or send the next model request. Checkpoints are taken at step boundaries: after each model
// response, and after the tool results of a response. A checkpoint carries every item emitted
// before it, so a later attempt continues after them and never emits them again.
import type { ModelRequest, RequestToolCall } from '../../runtime/providers/model-adapters/index.js';
import { outputRetries, toolRetries } from './agent-config.js';
import { CheckpointError, sharedStateCodec, adoptForSuccessor, initialState, type AgentState, type Pending } from './agent-state.js';
import { HostRequestError, type AttemptPort } from './attempt-port.js';
import { ModelTarget, type AttemptStart, type DoneMessage } from './attempt-protocol.js';
import type { AttemptSetup } from './attempt-setup.js';
import { ContextManager, fromLastSummary } from './context/index.js';
import type { ContentPart } from '../../runtime/providers/model-adapters/index.js';
import { assistantMessage, contentParts, itemParts, unansweredCalls, userMessage } from './conversation.js';
import { MediaResolver, needsUnderstanding, understandPart } from './media/index.js';
import { ItemWriter } from './item-writer.js';
import { modelEndpoint, runModelTurn, modelCaller, type ModelCaller } from './model-turn.js';
import { checkSchema, isModelApi } from '../../runtime/providers/model-adapters/index.js';
import { reaskMessage } from './output-spec.js';
import { settleToolCalls, waitReason } from './tool-settlement.js';

type Outcome = DoneMessage | undefined;

export class AgentLoop {
  private readonly items: ItemWriter;
  private readonly codec = sharedStateCodec();
  private readonly caller: ModelCaller;
  private readonly context: ContextManager;
  private readonly media: MediaResolver;
  private state: AgentState;
  private seq: number;
  /** Something changed since the last checkpoint (items, messages). */
  private dirty = false;
  /** Steer entries incorporated since the last checkpoint. */
  private steered: string[] = [];
  /** The model the requests go to: the start's, then what the host answers before each later request. */
  private target: ModelTarget;
  /**
   * Whether the next model request may go out without asking the host first: only the
   * attempt's first, whose model the host resolved moments before the start.
   */
  private targetFresh = true;

  constructor(
    private readonly start: AttemptStart,
    private readonly port: AttemptPort,
    private readonly setup: AttemptSetup,
  ) {
    this.seq = start.checkpoint_seq;
    this.target = start.model;
    this.items = new ItemWriter((m) => port.post(m), start.next_ordinal);
    const caller = modelCaller(start.model, { timeout_ms: start.limits.model_timeout_ms, items: this.items, signal: port.signal, usage: { requests: 0, input_tokens: 0, output_tokens: 0 } });
    if (!caller) throw new Error(`no adapter for model API "${start.model.api}"`); // prepareAttempt refuses such starts
    this.caller = caller;
    this.context = new ContextManager(start, caller, this.items);
    this.media = new MediaResolver(start, port, port.signal);
    this.state = initialState(this.threadContext());
  }

  async run(): Promise<DoneMessage> {
    try {
      const refused = await this.load();
      if (refused) return refused;
    } catch (err) {
      if (err instanceof CheckpointError) return this.failed('checkpoint_invalid', err.message);
      throw err;
    }
    // Tools revealed before (by deferred loading) are offered again from the first request on.
    // A tool that cannot be loaded now stays hidden; the model can load it again.
    if (this.state.revealed_tools?.length) await this.setup.catalog.reveal(this.state.revealed_tools, this.port.signal).catch(() => undefined);
    for (;;) {
      const outcome = await this.advance();
      if (outcome) return outcome;
    }
  }

  /** Continues from the checkpoint, or begins the run with its input as the first item. */
  private async load(): Promise<Outcome> {
    if (this.start.checkpoint) {
      const saved = this.codec.decode(this.start.checkpoint);
      // Ordinals continue where the host says (start.next_ordinal), not where the state was written.
      this.state = saved.run_id === this.start.run.id ? { ...saved, pending: null } : adoptForSuccessor(saved, this.start);
    } else if (this.start.resume) {
      // A successor started without its predecessor's checkpoint: the thread history ends with
      // the waiting run's messages (its open calls), and the resume batch answers them. The
      // batch's own input is the new user message, not run.input.
      this.state = adoptForSuccessor(initialState(this.threadContext()), this.start);
    }
    // The run's usage lives in the state, so it survives attempts; the caller counts into it.
    this.caller.usage = this.state.usage;
    if (!this.start.checkpoint && !this.start.resume) return this.appendUser(contentParts(this.start.run.input.content, this.start.asset_facts), {});
    return undefined;
  }

  private async advance(): Promise<Outcome> {
    if (this.port.signal.aborted) return this.cancelled();
    if (this.state.final) return this.completed(this.state.final.output);
    if (this.port.draining) return this.handoff();
    const open = unansweredCalls(this.state.messages);
    if (open.length > 0) return this.settle(open);
    if (this.state.queued_input) {
      const refused = await this.appendUser(this.state.queued_input, {});
      if (refused) return refused;
      this.state.queued_input = null;
    }
    const refused = await this.applySteers();
    if (refused) return refused;
    return this.modelStep();
  }

  private async settle(open: readonly RequestToolCall[]): Promise<Outcome> {
    const { state, items } = this;
    const refused = await this.refreshReviewer();
    if (refused) return refused;
    this.dirty = true;
    const { catalog, reviewer } = this.setup;
    const pending = await settleToolCalls({ state, items, catalog, reviewer, signal: this.port.signal, now: () => new Date(), host: this.port, run: this.start.run }, open);
    if (this.port.signal.aborted) return this.cancelled();
    if (pending) return this.waiting(pending);
    if (state.tool_errors > toolRetries(this.setup.config)) {
      return this.failed('tool_retries_exhausted', `${state.tool_errors} consecutive tool calls failed (retries.tools is ${toolRetries(this.setup.config)})`);
    }
    this.checkpoint();
    return undefined;
  }

  private async modelStep(): Promise<Outcome> {
    const max = this.start.limits.max_requests;
    // Checked before sending: the request that would exceed max_usage.requests is never made.
    if (max !== null && this.state.usage.requests + 1 > max) {
      return this.failed('max_requests_exceeded', `the run reached its limit of ${max} model requests`);
    }
    const refused = await this.refreshTarget();
    if (refused) return refused;
    this.dirty = true;
    const understood = await this.understandHistory();
    if (understood) return understood;
    const prepared = await this.context.prepare(this.state, this.request());
    if (!prepared.ok) return this.cancelled();
    // The compaction (its item, the summary in the state, its usage) commits before the request.
    if (prepared.compacted) this.checkpoint();
    // Media by reference → inline bytes (or their descriptions) for this request only.
    const resolved = await this.media.resolve(prepared.request);
    if (!resolved.ok) return this.port.signal.aborted ? this.cancelled() : this.failed(resolved.failure.code, resolved.failure.message);
    this.targetFresh = false;
    const result = await runModelTurn(this.caller, resolved.request);
    if (!result.ok) {
      if (this.port.signal.aborted || result.error.code === 'cancelled') return this.cancelled();
      if (result.error.code === 'context_overflow') return this.recoverOverflow(result.error.message);
      return this.failed(`model_${result.error.code}`, result.error.message);
    }
    this.context.responded(this.state);
    const { text, calls } = result.output;
    this.state.steps += 1;
    this.state.messages.push(assistantMessage(text, calls));
    if (calls.length === 0) {
      const refused = this.acceptAnswer(text);
      if (refused) return refused;
    }
    this.checkpoint();
    return undefined;
  }

  /**
   * Before every model request but the attempt's first, the host resolves the run's model again
   * from the current rows (host request model.resolve): a model or provider disabled while the
   * run executes refuses this request — the run fails with `model_disabled` and nothing is
   * sent — and a changed credential, endpoint or renewed access token applies from here on.
   * The loop waits for the answer, so no request can go out after a disable has committed.
   */
  private async refreshTarget(): Promise<Outcome> {
    if (this.targetFresh) return undefined;
    let answer: unknown;
    try {
      answer = await this.port.request('model.resolve', {});
    } catch (err) {
      if (!(err instanceof HostRequestError)) throw err;
      if (err.code === 'cancelled' || this.port.signal.aborted) return this.cancelled();
      return this.failed(err.code, err.message);
    }
    if (!checkSchema(ModelTarget, answer)) return this.failed('internal', 'the host answered model.resolve with something that is not a model target');
    if (!isModelApi(answer.api)) return this.failed('model_unsupported_api', `no adapter for model API "${answer.api}"`);
    // In place: the context manager's compaction requests share this caller.
    this.caller.api = answer.api;
    this.caller.endpoint = modelEndpoint(answer);
    this.target = answer;
    this.targetFresh = true;
    return undefined;
  }

  /**
   * Reviews are model requests too: before a batch of tool calls is settled, the reviewer's
   * model is resolved again like the run's. When the run's own model reviews, a disable fails
   * the run as for its own requests; a reviewer model of its own that became unusable makes
   * the reviews follow on_error, as at the start. The run's next request asks again (the tools
   * of the batch may take long).
   */
  private async refreshReviewer(): Promise<Outcome> {
    const reviewer = this.setup.reviewer;
    if (!reviewer) return undefined;
    if (this.start.reviewer_model === undefined) {
      const refused = await this.refreshTarget();
      if (refused) return refused;
      if (isModelApi(this.target.api)) reviewer.model = { api: this.target.api, endpoint: modelEndpoint(this.target), target: this.target };
      this.targetFresh = false;
      return undefined;
    }
    try {
      const answer = await this.port.request('model.resolve', { role: 'reviewer' });
      if (!checkSchema(ModelTarget, answer) || !isModelApi(answer.api)) throw new HostRequestError('internal', 'the host answered model.resolve with something that is not a usable model target');
      reviewer.model = { api: answer.api, endpoint: modelEndpoint(answer), target: answer };
      reviewer.unavailable = '';
    } catch (err) {
      if (!(err instanceof HostRequestError)) throw err;
      if (err.code === 'cancelled' || this.port.signal.aborted) return this.cancelled();
      reviewer.model = null;
      reviewer.unavailable = `the reviewer model is unavailable: ${err.message}`;
    }
    return undefined;
  }

  /** The vendor refused the request as too long: one compaction, then the loop sends it again. */
  private async recoverOverflow(vendorMessage: string): Promise<Outcome> {
    const recovery = await this.context.recover(this.state, this.request(), vendorMessage);
    if (recovery.ok) {
      this.checkpoint();
      return undefined;
    }
    if (recovery.cancelled || this.port.signal.aborted) return this.cancelled();
    return this.failed(recovery.code, recovery.message);
  }

  /** The thread's conversation as this run continues it: from the last compaction summary on. */
  private threadContext(): AttemptStart {
    return { ...this.start, history: fromLastSummary(this.start.history) };
  }

  /** Final answer: accepted (state.final), re-asked, or failed when re-asks are used up. */
  private acceptAnswer(text: string): Outcome {
    const checker = this.setup.output;
    if (!checker) {
      this.state.final = { output: text };
      return undefined;
    }
    const check = checker.check(text);
    if (check.ok) {
      this.items.emit('output', { output: check.output });
      this.state.final = { output: check.output };
      return undefined;
    }
    const allowed = outputRetries(this.setup.config);
    if (this.state.output_retries >= allowed) return this.failed('output_invalid', `the final answer was rejected: ${check.problem}`);
    this.state.output_retries += 1;
    this.items.emit('notice', { code: 'output_invalid', message: check.problem, retry: this.state.output_retries, of: allowed });
    this.state.messages.push(userMessage(reaskMessage(check.problem)));
    return undefined;
  }

  private request(): ModelRequest {
    const { config, catalog, output } = this.setup;
    const request: ModelRequest = {
      model: this.target.model,
      messages: this.state.messages,
      settings: { ...this.target.settings, ...config.model_settings },
    };
    const instructions = [config.instructions, ...this.setup.promptSections, output?.instructions].filter((s): s is string => !!s).join('\n\n');
    if (instructions) request.instructions = instructions;
    if (catalog.size > 0) request.tools = catalog.modelTools();
    return request;
  }

  private async applySteers(): Promise<Outcome> {
    for (const entry of this.port.takeSteers()) {
      // The host may hand an entry over again after a restart; it joins the conversation once.
      if (this.state.incorporated_steer_ids.includes(entry.id)) continue;
      const refused = await this.appendUser(contentParts(entry.content), { entry_id: entry.id });
      if (refused) return refused;
      this.state.incorporated_steer_ids.push(entry.id);
      this.steered.push(entry.id);
    }
    return undefined;
  }

  /**
   * A user turn joins the conversation. Media the run's model does not take are first described
   * or transcribed by the media_understanding model, so the user_message item records it.
   */
  private async appendUser(input: ContentPart[], extra: Record<string, unknown>): Promise<Outcome> {
    // An empty user message would only make vendors refuse the request.
    if (input.length === 0) return undefined;
    const parts: ContentPart[] = [];
    for (const part of input) {
      if (part.type !== 'asset' || !needsUnderstanding(this.start, part)) {
        parts.push(part);
        continue;
      }
      const understood = await understandPart(this.understandingDeps(), part);
      if (!understood.ok) return understood.failure.code === 'cancelled' ? this.cancelled() : this.failed(understood.failure.code, understood.failure.message);
      parts.push(understood.part);
    }
    this.items.emit('user_message', { content: itemParts(parts), ...extra });
    this.state.messages.push(userMessage(parts));
    this.dirty = true;
    return undefined;
  }

  /**
   * Media of earlier turns (another run of the thread, another model) that this run's model
   * does not take and nobody described yet: understood now, recorded by a notice item, kept in
   * the state. Parts a model cannot be found for are left to the resolver, which fails the run.
   */
  private async understandHistory(): Promise<Outcome> {
    for (const message of this.state.messages) {
      if (message.role !== 'user' || typeof message.content === 'string') continue;
      for (const [i, part] of message.content.entries()) {
        if (part.type !== 'asset' || !needsUnderstanding(this.start, part) || part.kind === 'file' || !this.start.media_models?.[part.kind]) continue;
        const understood = await understandPart(this.understandingDeps(), part);
        if (!understood.ok) return understood.failure.code === 'cancelled' ? this.cancelled() : this.failed(understood.failure.code, understood.failure.message);
        message.content[i] = understood.part;
        this.items.emit('notice', { code: 'media_understood', asset_id: part.asset_id, kind: part.kind, ...understood.part.understanding });
        this.dirty = true;
      }
    }
    return undefined;
  }

  private understandingDeps() {
    return { start: this.start, host: this.port, signal: this.port.signal, usage: this.state.usage };
  }

  private checkpoint(): void {
    // The host commits every item below next_ordinal with this checkpoint: none may be open.
    if (this.items.openCount > 0) throw new Error(`checkpoint with ${this.items.openCount} open items`);
    this.state.next_ordinal = this.items.nextOrdinal;
    const revealed = this.setup.catalog.revealed();
    if (revealed.length > 0) this.state.revealed_tools = revealed;
    this.seq += 1;
    this.port.post({
      type: 'checkpoint',
      seq: this.seq,
      state: this.codec.encode(this.state),
      next_ordinal: this.items.nextOrdinal,
      usage: { ...this.state.usage },
      incorporated_entry_ids: this.steered,
    });
    this.steered = [];
    this.dirty = false;
  }

  private checkpointIfDirty(): void {
    if (this.dirty || this.steered.length > 0) this.checkpoint();
  }

  private completed(output: unknown): DoneMessage {
    this.checkpointIfDirty();
    return { ...this.done('completed'), output, history_append: this.historyAppend() };
  }

  private waiting(pending: Pending): DoneMessage {
    // The wait is committed with its checkpoint: a successor continues from exactly this state.
    this.state.pending = pending;
    this.checkpoint();
    return { ...this.done('waiting'), wait_reason: waitReason(pending), pending, history_append: this.historyAppend() };
  }

  private handoff(): DoneMessage {
    this.checkpointIfDirty();
    return this.done('handoff');
  }

  private failed(code: string, message: string): DoneMessage {
    this.commitStreamed();
    return { ...this.done('failed'), failure: { code, message } };
  }

  private cancelled(): DoneMessage {
    this.commitStreamed();
    return this.done('cancelled');
  }

  /**
   * A run that ends without its final step (failed, cancelled) still commits the items its
   * stream already carried (the user's message, a broken-off answer completed as
   * interrupted), so GET items matches what subscribers saw. Items are never left open at an
   * end; if one were, nothing is committed rather than a torn step.
   */
  private commitStreamed(): void {
    if (this.items.openCount === 0) this.checkpointIfDirty();
  }

  private done(outcome: DoneMessage['outcome']): DoneMessage {
    return { type: 'done', outcome, usage: { ...this.state.usage } };
  }

  private historyAppend(): DoneMessage['history_append'] {
    return this.state.messages.slice(this.state.history_start) as unknown as NonNullable<DoneMessage['history_append']>;
  }
}
