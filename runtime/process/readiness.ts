/**
 * Readiness of one process: not ready until startup completes; not ready for good once a
 * background task it depends on has stopped (the process then reports instead of hanging,
 * and an orchestrator replaces it).
 */
export class Readiness {
  private started = false;
  private readonly failed = new Set<string>();

  markStarted(): void {
    this.started = true;
  }

  markFailed(task: string): void {
    this.failed.add(task);
  }

  failedTasks(): string[] {
    return [...this.failed];
  }

  isRuntimeReady(): boolean {
    return this.started && this.failed.size === 0;
  }
}
