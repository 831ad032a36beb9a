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
    const old = this.map.get(threadId);
    if (old && old.count >= history.length) return;
    if (old) this.held -= old.text.length;
    this.map.delete(threadId);
    this.map.set(threadId, { count: history.length, text: history.text });
    this.held += history.text.length;
    for (const [key, prefix] of this.map) {
      if (this.held <= this.maxChars) break;
      this.map.delete(key);
      this.held -= prefix.text.length;
    }
  }
}
