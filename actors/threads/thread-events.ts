import { entryView, runView, threadEventView, type InboxEntry, type RunRow, type StreamEvent, type ThreadState } from '../../runtime/index.js';
import type { EngineContext } from '../engine/index.js';

/** Collects a thread operation's stream events; they are published after the transaction commits. */
export class ThreadEvents {
  readonly events: StreamEvent[] = [];

  /** Forgets what a rolled-back try of the operation collected (a retried transaction). */
  clear(): this {
    this.events.length = 0;
    return this;
  }

  entry(entry: InboxEntry): this {
    this.events.push({ type: 'entry.changed', entry_id: entry.id, status: entry.status, entry: entryView(entry) as Record<string, unknown> });
    return this;
  }

  run(run: RunRow): this {
    this.events.push({ type: 'run.status', run_id: run.id, status: run.status, run: runView(run) });
    return this;
  }

  /**
   * thread.changed carries the thread without message_history, with message_count: the event
   * goes to every subscriber at every POST that starts a run and every seal, and a client
   * that wants the history GETs the thread (README, "Streaming").
   */
  thread(thread: ThreadState): this {
    this.events.push({ type: 'thread.changed', thread: threadEventView(thread) as unknown as Record<string, unknown> });
    return this;
  }

  /** Called after the operation's transaction committed. */
  async publish(context: EngineContext, threadId: string): Promise<void> {
    // A run this commit accepted goes straight to a worker host of this process (role all).
    if (context.localClaimers.size > 0) {
      const accepted = this.events.flatMap((e) => (e.type === 'run.status' && e.status === 'accepted' ? [e.run_id] : []));
      if (accepted.length > 0) for (const wake of context.localClaimers) wake(accepted);
    }
    if (this.events.length > 0) await context.bus.publish(threadId, this.events);
  }
}
