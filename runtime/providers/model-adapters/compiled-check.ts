// TypeBox checks compiled once per schema and thread, for the schemas checked on every attempt
// and every model request (the start message with the thread's history, the request with the
// whole conversation). Value.Check interprets the schema on every call; the compiled check is
// a generated function, several times faster on the same data, with the same answers. The
// cache is this module's only state, keyed weakly by the schema object and filled on first use.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

const checks = new WeakMap<TSchema, (value: unknown) => boolean>();

export function checkSchema<T extends TSchema>(schema: T, value: unknown): value is Static<T> {
  let check = checks.get(schema);
  if (check === undefined) {
    try {
      const compiled = TypeCompiler.Compile(schema);
      check = (v) => compiled.Check(v);
    } catch {
      // A schema the compiler cannot take (an unregistered kind): the interpreter decides.
      check = (v) => Value.Check(schema, v);
    }
    checks.set(schema, check);
  }
  return check(value);
}
