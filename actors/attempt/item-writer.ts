// Emits run items on the port and hands out their ordinals. Ordinals are allocated here only,
// one at a time, continuing from the first ordinal the host allows (start.next_ordinal), so
// they stay gap-free across attempts (invariant 3). The writer tracks open items: a checkpoint
// may only be taken when none is open, because the host commits every item below
// next_ordinal with it.
import { randomFillSync } from 'node:crypto';
import type { AttemptMessage, ItemBody, ItemKind } from './attempt-protocol.js';

export interface OpenItem {
  ordinal: number;
  id: string;
  kind: ItemKind;
}

type Content = Record<string, unknown>;
type Delta = { text?: string; arguments?: string };

const ID_BYTES = 12;
// Random bytes for 256 ids per system call: randomBytes(12) per item was a measurable share
// of an attempt thread (a fresh buffer and a getrandom call per item). Per-thread state, filled
// on first use; a reused byte would take a bug in the offset arithmetic, not a race (one thread).
const pool = { bytes: Buffer.alloc(0), offset: 0 };

export function newItemId(): string {
  if (pool.offset + ID_BYTES > pool.bytes.length) {
    if (pool.bytes.length === 0) pool.bytes = Buffer.allocUnsafeSlow(ID_BYTES * 256);
    randomFillSync(pool.bytes);
    pool.offset = 0;
  }
  const id = pool.bytes.toString('base64url', pool.offset, pool.offset + ID_BYTES);
  pool.offset += ID_BYTES;
  return `itm_${id}`;
}

export class ItemWriter {
  private next: number;
  private readonly open = new Map<number, OpenItem>();

  constructor(
    private readonly post: (message: AttemptMessage) => void,
    firstOrdinal: number,
  ) {
    this.next = firstOrdinal;
  }

  /** The first unused ordinal: what a checkpoint reports as next_ordinal. */
  get nextOrdinal(): number {
    return this.next;
  }

  get openCount(): number {
    return this.open.size;
  }

  start(kind: ItemKind, content: Content): OpenItem {
    const item: OpenItem = { ordinal: this.next++, id: newItemId(), kind };
    this.open.set(item.ordinal, item);
    this.post({ type: 'item.started', ordinal: item.ordinal, item: body(item, content) });
    return item;
  }

  delta(item: OpenItem, delta: Delta): void {
    this.post({ type: 'item.delta', ordinal: item.ordinal, delta });
  }

  complete(item: OpenItem, content: Content): void {
    if (!this.open.delete(item.ordinal)) throw new Error(`item ${item.ordinal} is not open`);
    this.post({ type: 'item.completed', ordinal: item.ordinal, item: body(item, content) });
  }

  /** An item whose content is known at once (user message, tool result, output, notice). */
  emit(kind: ItemKind, content: Content): OpenItem {
    const item = this.start(kind, content);
    this.complete(item, content);
    return item;
  }
}

function body(item: OpenItem, content: Content): ItemBody {
  return { id: item.id, kind: item.kind, content };
}
