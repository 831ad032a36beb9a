/**
 * When a batcher's queue leaves: at the end of the current microtask run ("now": whatever was
 * issued together in it leaves together), or at the end of the event-loop tick (setImmediate:
 * everything queued in this tick leaves as one batch). The rule both batchers follow
 * (runtime/streams CommandBatcher, runtime/stores StatementBatcher): now when nothing of theirs
 * is in flight (a lone item never waits) or the item is urgent; otherwise at the tick's end.
 * Once due now, a flush is not moved to the tick's end; a flush due at the tick's end is
 * brought forward by an item that is due now (its flush takes the whole queue).
 */
export class TickFlush {
  private dueNow = false;
  private dueAtTickEnd = false;

  constructor(private readonly flush: () => void) {}

  /** Schedules the flush for an item just queued; `inFlight`: batches of this batcher not yet answered. */
  schedule(inFlight: number, urgent = false): void {
    if (this.dueNow) return;
    if (urgent || (inFlight === 0 && !this.dueAtTickEnd)) {
      this.dueNow = true;
      queueMicrotask(() => {
        this.dueNow = false;
        this.flush();
      });
      return;
    }
    if (this.dueAtTickEnd) return;
    this.dueAtTickEnd = true;
    setImmediate(() => {
      this.dueAtTickEnd = false;
      this.flush();
    });
  }
}
