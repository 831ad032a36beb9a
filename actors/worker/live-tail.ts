import { mediaContentRefs, type ArgumentsProgress, type RunItem, type StreamBus, type StreamEvent } from '../../runtime/index.js';
import { resyncEvents } from './tail-resync.js';

interface TailItem extends RunItem {
  committed: boolean;
}

/** Give up re-publishing for a sealed run after this long without the store. */
const SEALED_RESYNC_MS = 3600_000;

/**
 * The tail of one running attempt: items live output can still change, held in the host's
 * memory (the single writer of a running run's tail). Every change is published to the thread's
 * stream; events are batched per tick into one pipelined XADD, and the stream ids they get are
 * recorded on the items (first_stream_id / last_stream_id) so a client that read an item can
 * join the stream right after it. The bus batches further across every run of the process (one
 * pipeline per round trip, runtime/streams command-batcher.ts); a tail's FIRST event is not
 * held for the tick: it is sent at once, with the anchor, in one round trip.
 *
 * Batches are pipelined: a batch leaves at its tick's end without waiting for the previous
 * batch's reply (the run's first delta no longer waits a round trip behind its item.started).
 * Order holds because every publish and snapshot goes through the bus's one ordered connection
 * (the command batcher queues them in call order), and the replies are settled one at a time in
 * dispatch order (`flushing`), so ids are recorded and tail snapshots written in stream order.
 * The anchor is taken by the first batch; a batch sent before its reply came rides behind it on
 * the same connection (it is not anchored again, which would move the snapshot past the first
 * batch). A snapshot is taken at dispatch (content as of its batch) and completed at settle with
 * the ids of the batches settled before it (`streamIds`), which its dispatch could not know yet.
 * A loss learned at settle is handled as before, with one difference: batches that left after
 * the lost one may have been published. They are folded into the resync, which re-publishes
 * every item from the first lost ordinal whole after a `tail.reset` — so a client still ends
 * with every item exactly as committed.
 *
 * The tail snapshot in the store (read by GET /runs/{id}/items) is always a consistent pair:
 * its items reflect exactly this attempt's events up to its last_stream_id, so a client that
 * reads it and subscribes after that id neither misses nor repeats a delta. Two rules keep it so:
 * - Anchor: before this attempt's first publish (and before a resync) the snapshot is set to
 *   no items at the stream's current last id. A reader that finds no snapshot therefore knows
 *   nothing of this attempt is in the stream yet.
 * - Resync: events the store lost (publish answered null: the store was unreachable) are never
 *   replayed one by one. From the first lost ordinal on, the tail is re-published whole once
 *   the store is back — `tail.reset` then every affected item with its full content, including
 *   items committed meanwhile — so a client resuming from any point before the loss ends with
 *   every item exactly as committed (README: "Key-value store lost").
 */
export class LiveTail {
  private readonly items = new Map<number, TailItem>();
  private batch: Array<{ ordinal: number; event: StreamEvent }> = [];
  private flushing: Promise<void> = Promise.resolve();
  /** The last tail snapshot written (not awaited by the next publish: the bus keeps their order). */
  private tailWrite: Promise<unknown> = Promise.resolve();
  /** Batches dispatched whose reply is not settled yet (the pipelined path). */
  private unsettled = 0;
  /** A dispatch is due at the tick's end (setImmediate). */
  private scheduled = false;
  /** A dispatch is due at once (process.nextTick), for an urgent batch. */
  private dueNow = false;
  private sentAny = false;
  private sentDelta = false;
  /** The batch holds what a client waits for first: it is published urgent (PublishOptions). */
  private urgent = false;
  /** The tool call whose arguments stream now, and its item's ordinal (cleared when it completes). */
  private args: ArgumentsProgress | null = null;
  private argsOrdinal: number | null = null;
  /** An anchor was sent and not found failed (set when the anchored publish leaves, not when it answers). */
  private anchored = false;
  /** The attempt ended without sealing (discard): nothing more is published or snapshotted. */
  private discarded = false;
  /** Each item's first and last stream id as settled so far (in stream order), also for items
   *  committed since: a snapshot taken at dispatch is completed with them at settle. */
  private readonly streamIds = new Map<number, { first: string; last: string }>();
  /** The lowest ordinal with an event the store lost; null while everything was published. */
  private lostFrom: number | null = null;
  /** Items committed while their events were lost: re-published by the resync. */
  private readonly committedUnstreamed = new Map<number, RunItem>();
  /** Events to re-publish after the committed items once the attempt has ended (its seal). */
  private closing: { events: StreamEvent[]; until: number } | null = null;

  /** This attempt, as its publishes are fenced (PublishOptions.fence). */
  private readonly fence: { run_id: string; attempt: number };

  constructor(
    private readonly bus: StreamBus,
    private readonly runId: string,
    private readonly threadId: string,
    private readonly attempt: number,
  ) {
    this.fence = { run_id: runId, attempt };
  }

  started(ordinal: number, item: { id: string; kind: string; content: Record<string, unknown> }): void {
    this.items.set(ordinal, { ...item, ordinal, state: 'in_progress', content_refs: mediaContentRefs(item.content), first_stream_id: null, last_stream_id: null, started_at: new Date().toISOString(), ended_at: null, committed: false });
    this.emit(ordinal, { type: 'item.started', run_id: this.runId, ordinal, item: this.view(ordinal) });
  }

  delta(ordinal: number, delta: { text?: string | undefined; arguments?: string | undefined }): void {
    const item = this.items.get(ordinal);
    if (!item) return;
    if (delta.text !== undefined) item.content = { ...item.content, text: `${(item.content.text as string | undefined) ?? ''}${delta.text}` };
    if (delta.arguments !== undefined) item.content = { ...item.content, arguments: `${(item.content.arguments as string | undefined) ?? ''}${delta.arguments}` };
    const event: StreamEvent = { type: 'item.delta', run_id: this.runId, ordinal, delta: delta as Record<string, unknown> };
    if (delta.arguments !== undefined) this.trackArguments(ordinal, item, event, delta.arguments);
    this.emit(ordinal, event);
  }

  private trackArguments(ordinal: number, item: TailItem, event: StreamEvent, fragment: string): void {
    const key = typeof item.content.tool_call_id === 'string' ? item.content.tool_call_id : item.id;
    const previous = this.args?.key === key ? this.args : null;
    // `stream` is filled in when the event gets its stream id (send).
    this.args = { at: new Date().toISOString(), event: event as unknown as Record<string, unknown>, key, sequence: (previous?.sequence ?? 0) + 1, size: (previous?.size ?? 0) + Buffer.byteLength(fragment, 'utf8'), stream: null };
    this.argsOrdinal = ordinal;
  }

  completed(ordinal: number, item: { id: string; kind: string; content: Record<string, unknown> }): void {
    const existing = this.items.get(ordinal);
    const base = existing ?? { ordinal, content_refs: {}, first_stream_id: null, last_stream_id: null, started_at: new Date().toISOString(), committed: false };
    // Media parts are referenced in content_refs (runtime/assets media-refs.ts).
    this.items.set(ordinal, { ...base, ...item, ordinal, state: 'completed', content_refs: { ...base.content_refs, ...mediaContentRefs(item.content) }, ended_at: new Date().toISOString(), committed: false });
    if (ordinal === this.argsOrdinal) {
      this.args = null;
      this.argsOrdinal = null;
    }
    this.emit(ordinal, { type: 'item.completed', run_id: this.runId, ordinal, item: this.view(ordinal) });
  }

  /** Items below `nextOrdinal` not yet committed; throws if one is still in progress. */
  uncommittedBelow(nextOrdinal: number): RunItem[] {
    const out: RunItem[] = [];
    for (const [ordinal, item] of [...this.items.entries()].sort((a, b) => a[0] - b[0])) {
      if (ordinal >= nextOrdinal || item.committed) continue;
      if (item.state !== 'completed') throw new Error(`item ${ordinal} is committed by a checkpoint while still in progress`);
      out.push(this.row(item));
    }
    return out;
  }

  markCommitted(nextOrdinal: number): void {
    for (const [ordinal, item] of this.items) {
      if (ordinal >= nextOrdinal) continue;
      // Its events were lost: the resync still owes it to the stream.
      if (this.lostFrom !== null && ordinal >= this.lostFrom) this.committedUnstreamed.set(ordinal, this.row(item));
      this.items.delete(ordinal);
    }
  }

  /** The not yet committed items, for GET /runs/{id}/items while the run executes. */
  snapshot(): Array<Record<string, unknown>> {
    return [...this.items.keys()].sort((a, b) => a - b).map((ordinal) => this.view(ordinal));
  }

  /** Waits until every event emitted so far has its stream id (or was found lost) and the
   *  tail snapshot that covers them is written. */
  async flush(): Promise<void> {
    if (this.batch.length > 0) this.dispatch();
    await this.flushing;
    await this.tailWrite;
  }

  /** The store is reachable again: re-publish what it lost without waiting for new output. */
  storeReady(): Promise<void> {
    if (this.lostFrom !== null) this.flushing = this.flushing.then(() => this.send());
    return this.flushing;
  }

  /**
   * The attempt ended (its run sealed). With nothing lost there is nothing to do. Otherwise the
   * tail stays alive for the resync, which re-publishes the items committed while the store was
   * lost followed by `events` (the seal's run.status, lost with the rest). Answers whether a
   * resync is still owed, so the owner keeps calling storeReady() until pending() turns false.
   */
  close(events: StreamEvent[]): boolean {
    if (this.lostFrom === null) return false;
    this.items.clear();
    this.closing = { events, until: Date.now() + SEALED_RESYNC_MS };
    return true;
  }

  /**
   * The attempt ended without sealing (lease lost, handoff, abandoned): whatever was lost is no
   * longer this tail's to publish — the next attempt starts with its own tail.reset.
   */
  discard(): void {
    if (this.closing) return;
    // Answers still in flight change nothing from here on: a late snapshot of this attempt must
    // not overwrite the anchor of the run's next attempt.
    this.discarded = true;
    this.lostFrom = null;
    this.committedUnstreamed.clear();
    this.items.clear();
  }

  /** Whether lost events still wait for their resync (false once given up on). */
  pending(): boolean {
    if (this.closing && Date.now() > this.closing.until) return false;
    return this.lostFrom !== null;
  }

  private emit(ordinal: number, event: StreamEvent): void {
    this.batch.push({ ordinal, event });
    // What the client waits for first — the run's first event (item.started) and its first
    // delta (the first token) — goes out at once, not at the end of the tick, and is published
    // urgent (the bus does not hold it behind the pipeline in flight either): it is never held
    // behind a batch. Later events of the tick coalesce into one publish (deltas arrive in
    // bursts from the attempt's port). "At once" is process.nextTick: it runs once the
    // microtask queue is empty, before any I/O, so the events the host handles in the same
    // turn (its message queue is a promise chain) join it — a user message's item.started and
    // item.completed leave as one publish and reach subscribers in one fan-out burst, not two.
    const first = !this.sentAny || (event.type === 'item.delta' && !this.sentDelta);
    this.sentAny = true;
    if (event.type === 'item.delta') this.sentDelta = true;
    if (first) {
      this.urgent = true;
      if (this.dueNow) return;
      this.dueNow = true;
      return void process.nextTick(() => {
        this.dueNow = false;
        this.dispatch();
      });
    }
    // A dispatch due already takes this event too (one due now dispatches the whole batch; the
    // one at the tick's end then finds what came after, or nothing).
    if (this.dueNow || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  /**
   * Sends the batch now and settles its reply after every earlier batch's. While a loss is known
   * (or the tail is closing) batches go one at a time through send(), which resyncs.
   */
  private dispatch(): void {
    if (this.discarded) {
      this.batch = [];
      return;
    }
    if (this.lostFrom !== null || this.closing) {
      this.flushing = this.flushing.then(() => this.send());
      return;
    }
    const batch = this.batch;
    const urgent = this.urgent;
    this.batch = [];
    this.urgent = false;
    if (batch.length === 0) return;
    // The snapshot as of this batch: output arriving while it is published belongs to the next
    // batch, so the snapshot written at settle covers exactly the events up to its last id.
    const view = this.snapshotRows();
    const args = this.args;
    const answered = this.publishBatch(batch.map((b) => b.event), urgent);
    this.unsettled++;
    this.flushing = this.flushing.then(async () => {
      const answer = await answered;
      this.unsettled--;
      return this.settle(batch, view, args, answer);
    });
  }

  /** Publishes, anchoring first when no anchor was sent yet; never rejects (a failure answers nulls). */
  private publishBatch(events: StreamEvent[], urgent: boolean): Promise<{ anchored: boolean; ids: Array<string | null> }> {
    let published: Promise<{ anchored: boolean; ids: Array<string | null> }>;
    // Fenced by this attempt: refused (ids null, as a loss) once a later attempt holds the run.
    if (this.anchored) published = this.bus.publish(this.threadId, events, { urgent, fence: this.fence }).then((ids) => ({ anchored: true, ids }));
    else {
      // Anchor and first publish in one round trip (the bus applies the anchor first); batches
      // sent before it answers follow it on the same connection, unanchored.
      this.anchored = true;
      published = this.bus.publishAnchored(this.threadId, { run_id: this.runId, attempt: this.attempt }, events, { urgent });
    }
    return published.catch(() => ({ anchored: false, ids: events.map(() => null) }));
  }

  private async settle(batch: Array<{ ordinal: number; event: StreamEvent }>, view: Array<Record<string, unknown>>, args: ArgumentsProgress | null, answer: { anchored: boolean; ids: Array<string | null> }): Promise<void> {
    if (this.discarded) return;
    const ids = answer.anchored ? answer.ids : batch.map(() => null);
    if (!answer.anchored) this.anchored = false;
    // An earlier batch was lost after this one had left: the resync re-publishes this batch's
    // items whole too (whether or not this batch reached the stream).
    if (this.lostFrom !== null) return this.intoResync(batch);
    if (ids.some((id) => id === null)) return this.lose(batch);
    this.record(batch, ids);
    for (const item of view) {
      const known = this.streamIds.get(item.ordinal as number);
      if (known) {
        item.first_stream_id = known.first;
        item.last_stream_id = known.last;
      }
    }
    // The arguments progress as of this batch, with the id of its event when the batch holds it.
    const at = args ? batch.findIndex((b) => b.event === (args.event as unknown)) : -1;
    const argsSnapshot = args ? { ...args, stream: at >= 0 ? (ids[at] ?? null) : args.stream } : args;
    // A later batch already left: its settle (next, in dispatch order) writes a snapshot that
    // covers this batch's events too, so this one would be overwritten unread by anyone who
    // could not as well read the earlier one — skipped. The stored snapshot stays a consistent
    // pair either way (items as of its batch, its batch's last id); the last batch of a burst
    // always writes, so flush() still ends with a snapshot of everything emitted.
    if (this.unsettled > 0) return;
    this.tailWrite = this.bus.setTail({ run_id: this.runId, attempt: this.attempt, items: view, last_stream_id: ids[ids.length - 1] ?? null, arguments: argsSnapshot });
  }

  /** The one-at-a-time path while events are lost: a batch waits for everything before it. */
  private async send(): Promise<void> {
    const batch = this.batch;
    const urgent = this.urgent;
    this.batch = [];
    this.urgent = false;
    if (this.lostFrom !== null) return this.intoResync(batch);
    if (batch.length === 0) return;
    const view = this.snapshotRows();
    return this.settle(batch, view, this.args, await this.publishBatch(batch.map((b) => b.event), urgent));
  }

  /**
   * While anything is lost, a batch is not published on its own: the resync re-publishes every
   * item from the first lost ordinal with its full content, which includes this batch's.
   */
  private intoResync(batch: Array<{ ordinal: number }>): Promise<void> | undefined {
    for (const { ordinal } of batch) this.lostFrom = Math.min(this.lostFrom!, ordinal);
    if (this.closing && Date.now() > this.closing.until) return;
    return this.resync();
  }

  /** Copies of the tail's items (content objects are replaced, never mutated, by delta()). */
  private snapshotRows(): Array<Record<string, unknown>> {
    return [...this.items.keys()].sort((a, b) => a - b).map((ordinal) => ({ ...this.view(ordinal) }));
  }

  /** Sets the snapshot to "nothing of this tail yet" at the stream's current end. */
  private async anchor(): Promise<boolean> {
    const last = await this.bus.lastId(this.threadId).catch(() => undefined);
    if (last === undefined) return false;
    this.anchored = await this.bus.setTail({ run_id: this.runId, attempt: this.attempt, items: [], last_stream_id: last ?? '0-0' });
    return this.anchored;
  }

  private lose(batch: Array<{ ordinal: number }>): void {
    const lowest = Math.min(...batch.map((b) => b.ordinal));
    this.lostFrom = Math.min(this.lostFrom ?? lowest, lowest);
    this.anchored = false;
  }

  private async resync(): Promise<void> {
    const from = this.lostFrom!;
    if (!(await this.anchor())) return;
    const tail = [...this.items.values()].filter((i) => i.ordinal >= from).sort((a, b) => a.ordinal - b.ordinal);
    const resent = [...[...this.committedUnstreamed.values()].sort((a, b) => a.ordinal - b.ordinal), ...tail.map((i) => this.row(i))];
    const batch = resyncEvents(this.runId, this.attempt, from, resent, this.closing?.events ?? []);
    const ids = await this.bus.publish(this.threadId, batch.map((b) => b.event), { fence: this.fence });
    if (ids.some((id) => id === null)) {
      this.anchored = false;
      return;
    }
    this.lostFrom = null;
    this.committedUnstreamed.clear();
    this.record(batch, ids);
    // A sealed run has no tail: the anchor's snapshot goes again.
    if (this.closing) await this.bus.clearTail(this.runId);
    else await this.bus.setTail({ run_id: this.runId, attempt: this.attempt, items: this.snapshot(), last_stream_id: ids[ids.length - 1] ?? null, arguments: this.args });
  }

  private record(batch: Array<{ ordinal: number; event?: StreamEvent }>, ids: Array<string | null>): void {
    batch.forEach(({ ordinal, event }, i) => {
      const id = ids[i];
      if (id && this.args && event === (this.args.event as unknown)) this.args.stream = id;
      if (id) this.streamIds.set(ordinal, { first: this.streamIds.get(ordinal)?.first ?? id, last: id });
      const item = this.items.get(ordinal);
      if (!item || !id) return;
      item.first_stream_id ??= id;
      item.last_stream_id = id;
    });
  }

  private row(item: TailItem): RunItem {
    const { committed: _c, ...row } = item;
    return row;
  }

  private view(ordinal: number): Record<string, unknown> {
    const item = this.items.get(ordinal)!;
    return this.row(item) as unknown as Record<string, unknown>;
  }
}
