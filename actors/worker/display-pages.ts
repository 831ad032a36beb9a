import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { pack, unpack } from 'msgpackr';
import {
  countItemRows,
  deleteItemRows,
  insertDisplayPage,
  listItemRows,
  withTransaction,
  type DisplayPage,
  type ObjectStore,
  type RunItem,
} from '../../runtime/index.js';
import type pg from 'pg';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** Committed items are packed into a page once this many are unpaged. */
export const PAGE_ITEMS = 64;

export async function encodePage(items: RunItem[]): Promise<Buffer> {
  return compress(pack({ v: 1, items }), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
}

export async function decodePage(bytes: Uint8Array, digest: string): Promise<RunItem[]> {
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== digest) throw new Error(`display page digest mismatch (expected ${digest}, got ${actual})`);
  const value = unpack(await decompress(bytes)) as { v: number; items: RunItem[] };
  return value.items;
}

/**
 * Packs the oldest PAGE_ITEMS unpaged committed items of a run into one compressed object and
 * swaps the rows for a pointer in one transaction. The object is written first under a
 * content-addressed key; the swap only deletes rows that are still there, and the pointer's
 * primary key (run_id, first_ordinal) makes a concurrent second packer fail harmlessly.
 * Committed items never change, so packing is safe at any time, from any process.
 */
export async function packDisplayPages(pool: pg.Pool, objects: ObjectStore, runId: string): Promise<number> {
  let packed = 0;
  for (;;) {
    const { count, first } = await countItemRows(pool, runId);
    if (count < PAGE_ITEMS || first === null) return packed;
    const items = await listItemRows(pool, runId, { from: first, to: first + PAGE_ITEMS - 1 });
    if (items.length < PAGE_ITEMS) return packed;
    const bytes = await encodePage(items);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const page: DisplayPage = {
      run_id: runId,
      first_ordinal: items[0]!.ordinal,
      last_ordinal: items[items.length - 1]!.ordinal,
      object_key: `runs/${runId}/pages/${digest}.msgpack.br`,
      digest,
      size_bytes: bytes.length,
      item_count: items.length,
    };
    await objects.put(page.object_key, bytes, { contentType: 'application/x-msgpack' });
    try {
      await withTransaction(pool, async (tx) => {
        await insertDisplayPage(tx, page);
        const removed = await deleteItemRows(tx, runId, { from: page.first_ordinal, to: page.last_ordinal });
        if (removed !== items.length) throw new Error('display rows changed while packing');
      });
    } catch {
      return packed; // another packer won; its page covers these items
    }
    packed++;
  }
}
