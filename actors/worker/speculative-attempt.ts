import { isDeepStrictEqual } from 'node:util';
import type { EnvironmentRuntime, JsonArrayText, RunRow, Services } from '../../runtime/index.js';
import type { AttemptPool, AttemptPost, AttemptStart, HostChannel } from '../attempt/index.js';
import { prepareAttempt } from './prepare-attempt.js';
import type { ModelSources } from './run-models.js';

/**
 * An attempt started before the transaction that accepts its run has committed (role all, an
 * input on a thread this process believes idle): prepared and posted to the attempt pool while
 * the inbox statement is on its way, so the model request overlaps the statement instead of
 * following its commit (bench/RESULTS.md session 19).
 *
 * What keeps RUNS.md's invariants: nothing the attempt produces leaves this object before the
 * run is committed, claimed by this very attempt. Every message of the task is held here (not
 * published, not committed, not answered) until `adopt`, which the worker host calls only from
 * LocalClaim.start — after the COMMIT, for the run the transaction inserted with this attempt's
 * id — and only when that run is the one speculated (`matches`: same run, attempt, input,
 * options, configuration and history length). Otherwise (the thread was busy, another key's
 * answer, a failed statement, a history that grew elsewhere) `discard` cancels the task, whose
 * messages are dropped; the run, if one was committed, starts the ordinary way. The attempt
 * thread itself opens no database, stream or object store, so the one effect a discarded
 * speculation can have had is a model request cancelled early (README "Speculative start").
 * Runs whose preparation has effects outside (an environment created at a vendor, MCP
 * sessions) are never speculated (`speculable`).
 */
export class SpeculativeAttempt {
  private readonly held: AttemptPost[] = [];
  private port: HostChannel | null = null;
  private crashed: { error: unknown } | null = null;
  private onCrash: ((error: unknown) => void) | null = null;
  private discarded = false;
  /** Preparing failed (read once `ready` is false): the error, as prepareAttempt threw it. */
  failure: { error: unknown } | null = null;
  private readonly signal = new AbortController();
  /** True once the task is posted; false when preparing failed or the speculation was discarded first. */
  readonly ready: Promise<boolean>;
  private readonly hold = (post: AttemptPost): void => void this.held.push(post);

  constructor(
    services: Services,
    models: ModelSources,
    pool: AttemptPool,
    environments: EnvironmentRuntime,
    /** The run as the accepting statement will insert it, if the thread is as this process holds it. */
    readonly run: RunRow,
    history: JsonArrayText | undefined,
  ) {
    this.ready = this.begin(services, models, pool, environments, history).catch(() => false);
  }

  private async begin(services: Services, models: ModelSources, pool: AttemptPool, environments: EnvironmentRuntime, history: JsonArrayText | undefined): Promise<boolean> {
    let start: AttemptStart;
    try {
      start = await prepareAttempt(services, models, this.run, { environments, signal: this.signal.signal }, history);
    } catch (error) {
      // Kept for the run if it is this one: its host answers it as its own preparation's
      // failure instead of preparing again (a refused token exchange is asked for once).
      this.failure = { error };
      return false;
    }
    if (this.discarded) return false;
    const { channel, task } = pool.run(start);
    this.port = channel;
    this.port.on('message', this.hold);
    task.then(
      () => this.settled(null),
      (error: unknown) => this.settled({ error }),
    );
    return true;
  }

  private settled(crash: { error: unknown } | null): void {
    if (this.discarded) {
      this.port?.close();
      return;
    }
    if (crash === null) return;
    if (this.onCrash) this.onCrash(crash.error);
    else this.crashed = crash;
  }

  /** Whether the committed run is the one this attempt was started for (every field the attempt's start is made of). */
  matches(run: RunRow): boolean {
    return isDeepStrictEqual(startFields(this.run), startFields(run));
  }

  /**
   * The attempt's port, handed to its host after the commit: the messages held so far are given
   * to `onMessage` in order, then every later one (synchronously, so none is skipped or
   * reordered); `onCrash` hears a task that died before its `done`, whenever it did.
   */
  adopt(onMessage: (post: AttemptPost) => void, onCrash: (error: unknown) => void): HostChannel {
    const port = this.port!;
    port.off('message', this.hold);
    for (const post of this.held.splice(0)) onMessage(post);
    port.on('message', onMessage);
    if (this.crashed) onCrash(this.crashed.error);
    else this.onCrash = onCrash;
    return port;
  }

  /** The run was not committed as speculated: the task is cancelled and everything it sends is dropped. */
  discard(): void {
    if (this.discarded) return;
    this.discarded = true;
    this.held.length = 0;
    this.signal.abort();
    if (!this.port) return;
    this.port.off('message', this.hold);
    this.port.on('message', () => undefined);
    this.port.postMessage({ type: 'cancel' });
  }
}

/**
 * A run may be speculated only when preparing and starting its attempt writes nothing for the
 * run and has no effect outside but model and token requests: no environment (created or
 * started at a vendor before the first request), no connection tools (MCP sessions opened by
 * the attempt at its start), no memory mounts (recall searches the provider and records its
 * sources on the run, fenced by the attempt, before the first request).
 */
export function speculable(run: RunRow): boolean {
  return typeof run.config.default_environment_template_id !== 'string'
    && ((run.config.connection_tools as unknown[] | undefined) ?? []).length === 0
    && run.memory_mounts.length === 0;
}

/** What prepareAttempt reads of a run (see prepare-attempt.ts and tool-resources/). */
function startFields(run: RunRow): unknown[] {
  return [
    run.id, run.workspace_id, run.thread_id, run.current_attempt_id, run.attempts, run.lineage, run.source_entry_id, run.input, run.options, run.config,
    run.memory_mounts, run.memory_sources, run.environment_mounts, run.resume, run.checkpoint_key, run.checkpoint_seq, run.next_ordinal, run.history_start,
  ];
}
