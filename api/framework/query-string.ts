import type { TObject, TSchema } from '@sinclair/typebox';
import { AppError } from '../../runtime/index.js';

function isArraySchema(schema: TSchema | undefined): boolean {
  return (schema as { type?: string } | undefined)?.type === 'array';
}

function coerce(schema: TSchema | undefined, raw: string): unknown {
  const type = (schema as { type?: string } | undefined)?.type;
  if (type === 'integer' || type === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

/**
 * Turns a raw query string into an object for the route's query schema: array-typed
 * parameters may repeat; any other parameter given twice is 400, and so is a parameter the
 * route does not know. Values are coerced to the schema's scalar types before validation.
 */
export function parseQuery(raw: string, schema: TObject | undefined): Record<string, unknown> {
  const params = new URLSearchParams(raw);
  const out: Record<string, unknown> = {};
  const properties = (schema?.properties ?? {}) as Record<string, TSchema>;
  for (const [name, value] of params) {
    const property = properties[name];
    if (!property) throw new AppError('invalid_argument', `query.${name}: unknown query parameter`, { details: { field: `query.${name}` } });
    if (isArraySchema(property)) {
      const items = (property as unknown as { items: TSchema }).items;
      ((out[name] ??= []) as unknown[]).push(coerce(items, value));
    } else if (name in out) {
      throw new AppError('invalid_argument', `query.${name}: given more than once`, { details: { field: `query.${name}` } });
    } else out[name] = coerce(property, value);
  }
  return out;
}
