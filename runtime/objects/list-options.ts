import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';
import type { ListOptions } from './object-store.js';

// 1000 is S3's own page cap for ListObjectsV2; the directory store uses the same so that
// callers paginate identically on both drivers.
export const MAX_LIST_LIMIT = 1000;

export interface NormalizedListOptions {
  limit: number;
  after: string | undefined;
}

export function normalizeListOptions(opts: ListOptions | undefined): NormalizedListOptions {
  const limit = opts?.limit ?? MAX_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new ObjectStoreError(OBJECT_STORE_ERROR.INVALID_ARGUMENT, `list limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  }
  const after = opts?.after === '' ? undefined : opts?.after;
  return { limit, after };
}

/** Compares keys by their UTF-8 bytes, the order S3 lists in (JS `<` compares UTF-16 units). */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
