/**
 * One actor per thread per process, activated on demand: a mailbox that runs one operation at
 * a time, in arrival order. Each operation also runs in one short transaction that locks the
 * thread row (lockThread), so operations on one thread never interleave — within this process
 * (the mailbox) nor across processes (the row lock). The mailbox is dropped when it empties.
 */
export class ThreadActors {
  private readonly mailboxes = new Map<string, Promise<unknown>>();

  run<T>(threadId: string, operation: () => Promise<T>): Promise<T> {
    const previous = this.mailboxes.get(threadId) ?? Promise.resolve();
    const next = previous.then(operation, operation);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.mailboxes.set(threadId, settled);
    void settled.then(() => {
      if (this.mailboxes.get(threadId) === settled) this.mailboxes.delete(threadId);
    });
    return next;
  }

  get active(): number {
    return this.mailboxes.size;
  }
}
