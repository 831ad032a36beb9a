import { Type, type TSchema } from '@sinclair/typebox';

export const Id = (description = 'identifier') => Type.String({ minLength: 1, maxLength: 128, description });
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      request_id: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'Error' },
);

export const Limit = (max: number, dflt: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: dflt, description: `page size, 1 to ${max} (default ${dflt})` }));
export const Cursor = Type.Optional(Type.String({ maxLength: 2048, description: 'opaque cursor from next_cursor' }));

export const ListOf = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) });

/** Labels: up to 32 string → string entries (spec 2.1, 8). */
export const Labels = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 1024 }), { maxProperties: 32 });
