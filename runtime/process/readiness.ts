/**
 * Readiness of one process: not ready until startup completes; not ready for good once a
 * background task it depends on has stopped (the process then reports instead of hanging, and
 * an orchestrator replaces it). A watched loop that stops beating — an await that never
 * returns, a loop that died without an error — counts as stopped once it has been silent for
 * longer than it may be.
 */
export class Readiness {
  private started = false;
  private readonly failed = new Set<string>();
  private readonly watched = new Map<string, { last: number; maxSilenceMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  markStarted(): void {
    this.started = true;
  }

  markFailed(task: string): void {
    this.failed.add(task);
  }

  /** Watches a background loop; call the returned beat() every time it completes a cycle. */
  watch(task: string, maxSilenceMs: number): () => void {
    const entry = { last: this.now(), maxSilenceMs };
    this.watched.set(task, entry);
    return () => {
      entry.last = this.now();
    };
  }

  unwatch(task: string): void {
    this.watched.delete(task);
  }

  failedTasks(): string[] {
    const now = this.now();
    const silent = [...this.watched].filter(([, w]) => now - w.last > w.maxSilenceMs).map(([task]) => task);
    return [...this.failed, ...silent];
  }

  isRuntimeReady(): boolean {
    return this.started && this.failedTasks().length === 0;
  }
}
