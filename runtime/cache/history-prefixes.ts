import type { HistoryPrefix, JsonArrayText } from '../http/index.js';

/** Characters of history text a process holds, at most (one byte each for ASCII text in V8, two otherwise). */
export const HISTORY_PREFIX_CHARS = 64 * 1024 * 1024;

/**
 * Per process: the text of the longest history prefix seen of each recent thread. A thread's
 * message_history only ever grows at its end (a run appends at its seal; nothing rewrites or
 * shortens it, and threads are never deleted), so a thread's first n messages never change:
 * an entry is true forever, in every process, and needs no invalidation. A read of a history
 * passes the prefix it holds and gets from PostgreSQL only the messages after it — not the
 * printing of the whole history as text, which is what a long history costs (1 MB at 2,000
 * messages: ~13 ms of PostgreSQL; bench/RESULTS.md session 10). Bounded by the characters held
 * (least recently used first out).
 */
/** What an entry counts against the bound: its text; an empty history a share for the entry itself, so those are bounded too. */
const cost = (prefix: HistoryPrefix): number => (prefix.count === 0 ? 64 : prefix.text.length);

export class HistoryPrefixes {
  private readonly map = new Map<string, HistoryPrefix>();
  private held = 0;

  constructor(private readonly maxChars = HISTORY_PREFIX_CHARS) {}

  get size(): number {
    return this.map.size;
  }

  get chars(): number {
    return this.held;
  }

  get(threadId: string): HistoryPrefix | undefined {
    const prefix = this.map.get(threadId);
    if (prefix === undefined) return undefined;
    this.map.delete(threadId);
    this.map.set(threadId, prefix);
    return prefix;
  }

  /** Keeps `history` (a history read from the database, or built from a prefix and what followed
   *  it) unless a longer prefix of the thread is held already. */
  remember(threadId: string, history: JsonArrayText): void {
    if (history.length === 0 || history.text.length > this.maxChars) return;
    this.keep(threadId, { count: history.length, text: history.text });
  }

  /**
   * A thread this process just created, with an empty history: held as a prefix of no message,
   * which tells a reader nothing (a prefix of count 0 is as good as none) but tells the inbox
   * that the whole history is known for the thread's first input (SpeculativeAttempt).
   */
  created(threadId: string): void {
    this.keep(threadId, { count: 0, text: '[]' });
  }

  private keep(threadId: string, prefix: HistoryPrefix): void {
    const old = this.map.get(threadId);
    if (old && (old.count > prefix.count || (old.count === prefix.count && prefix.count > 0))) return;
    if (old) this.held -= cost(old);
    this.map.delete(threadId);
    this.map.set(threadId, prefix);
    this.held += cost(prefix);
    for (const [key, held] of this.map) {
      if (this.held <= this.maxChars) break;
      this.map.delete(key);
      this.held -= cost(held);
    }
  }
}
