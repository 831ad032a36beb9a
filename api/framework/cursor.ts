import { AppError } from '../../runtime/index.js';

/** Opaque list cursors: base64url JSON of the position after the last item returned. */
export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor<T extends Record<string, string | number>>(cursor: string | undefined | null, keys: Array<keyof T>): T | undefined {
  if (cursor === undefined || cursor === null || cursor === '') return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (value && typeof value === 'object' && keys.every((k) => ['string', 'number'].includes(typeof value[k as string]))) return value as T;
  } catch {
    // fall through
  }
  throw new AppError('invalid_argument', 'query.cursor: not a cursor this API issued', { details: { field: 'query.cursor' } });
}

/** `{items, next_cursor}` from a page fetched with limit + 1 rows. */
export function page<T>(rows: T[], limit: number, positionOf: (last: T) => Record<string, string | number>): { items: T[]; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null };
}
