// JSON Schema 2020-12 validation (ajv) for tool arguments and structured output.
// Building an Ajv instance and compiling schemas is costly (measured ~10 % of a worker thread
// when done per attempt), and the same agent's schemas come back run after run: each worker
// thread keeps one compiler whose compiled validators are cached by schema text.
import ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv/dist/2020.js';

/** Undefined when the value is valid, else a short description of every violation. */
export type SchemaCheck = (value: unknown) => string | undefined;

export interface SchemaCompiler {
  /** Throws when the schema itself is invalid. */
  compile(schema: Record<string, unknown>): SchemaCheck;
}

export function createSchemaCompiler(): SchemaCompiler {
  // The CommonJS module's default export is the class (ESM sees module.exports).
  const Ajv2020 = ajv2020.default;
  // strict off: agent authors write schemas for models, often with annotations ajv does not
  // know; those must not fail the run. allErrors: the re-ask tells the model everything at once.
  // addUsedSchema off: two schemas carrying the same $id (say, two variants) must not clash.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, addUsedSchema: false });
  return {
    compile(schema) {
      // A draft-07 `$schema` would make ajv look for a meta-schema it does not carry; the
      // keywords agents use mean the same in 2020-12.
      const { $schema: _ignored, ...rest } = schema;
      const validate = ajv.compile(rest);
      return (value) => (validate(value) ? undefined : describeErrors(validate.errors ?? []));
    },
  };
}

const CACHE_LIMIT = 256;
// One per worker thread (module state is per thread under Piscina); bounded, oldest evicted.
let shared: SchemaCompiler | null = null;

/** The worker thread's compiler, caching compiled validators by the schema's text. */
export function sharedSchemaCompiler(): SchemaCompiler {
  if (shared) return shared;
  const inner = createSchemaCompiler();
  const cache = new Map<string, SchemaCheck>();
  shared = {
    compile(schema) {
      const key = JSON.stringify(schema);
      const hit = cache.get(key);
      if (hit) return hit;
      const check = inner.compile(schema);
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
      cache.set(key, check);
      return check;
    },
  };
  return shared;
}

function describeErrors(errors: readonly ErrorObject[]): string {
  const lines = errors.slice(0, 20).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${extra(e)}`);
  return lines.join('; ') || 'the value does not match the schema';
}

function extra(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (typeof params.additionalProperty === 'string') return ` (${params.additionalProperty})`;
  if (Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`;
  return '';
}
