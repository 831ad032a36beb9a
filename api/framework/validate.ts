import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { AppError } from '../../runtime/index.js';

export type Validator = TypeCheck<TSchema>;

export function compile(schema: TSchema): Validator {
  return TypeCompiler.Compile(schema);
}

/** Validates; on failure a 400 invalid_argument naming each offending field (at most 10). */
export function check(validator: Validator, value: unknown, where: 'body' | 'query' | 'path'): void {
  if (validator.Check(value)) return;
  const errors: Array<{ field: string; message: string }> = [];
  for (const error of validator.Errors(value)) {
    const field = `${where}${error.path.replaceAll('/', '.')}`;
    if (!errors.some((e) => e.field === field)) errors.push({ field, message: error.message });
    if (errors.length >= 10) break;
  }
  const first = errors[0];
  throw new AppError('invalid_argument', first ? `${first.field}: ${first.message}` : `invalid ${where}`, { details: { errors } });
}
