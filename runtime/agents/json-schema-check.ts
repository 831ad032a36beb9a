// A structural check of JSON Schema documents (drafts 7 to 2020-12): every keyword this
// service knows must have a value of the right shape, and every subschema position must hold
// a schema. It does not resolve $ref or validate instances; it catches documents a model
// vendor or an output validator would refuse later, at publish time, with the field named.
// Unknown keywords are allowed: JSON Schema permits them (annotations, vendor extensions).

const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);
const MAX_DEPTH = 24;

type Kind = 'schema' | 'schemaMap' | 'schemaList' | 'schemaOrList' | 'count' | 'number' | 'string' | 'stringList' | 'regex' | 'type' | 'boolean' | 'array' | 'dependencies';

const KEYWORDS: Record<string, Kind> = {
  additionalProperties: 'schema', propertyNames: 'schema', not: 'schema', if: 'schema', then: 'schema', else: 'schema',
  contains: 'schema', additionalItems: 'schema', unevaluatedItems: 'schema', unevaluatedProperties: 'schema', contentSchema: 'schema',
  properties: 'schemaMap', patternProperties: 'schemaMap', $defs: 'schemaMap', definitions: 'schemaMap', dependentSchemas: 'schemaMap',
  allOf: 'schemaList', anyOf: 'schemaList', oneOf: 'schemaList', prefixItems: 'schemaList',
  items: 'schemaOrList',
  maxLength: 'count', minLength: 'count', maxItems: 'count', minItems: 'count', maxProperties: 'count', minProperties: 'count',
  maxContains: 'count', minContains: 'count',
  minimum: 'number', maximum: 'number', exclusiveMinimum: 'number', exclusiveMaximum: 'number', multipleOf: 'number',
  $schema: 'string', $id: 'string', $ref: 'string', $anchor: 'string', $dynamicRef: 'string', $comment: 'string',
  title: 'string', description: 'string', format: 'string', contentEncoding: 'string', contentMediaType: 'string',
  required: 'stringList', pattern: 'regex', type: 'type', uniqueItems: 'boolean', readOnly: 'boolean', writeOnly: 'boolean',
  deprecated: 'boolean', enum: 'array', examples: 'array', dependentRequired: 'dependencies', dependencies: 'dependencies',
};

export interface JsonSchemaProblem {
  field: string;
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isCount = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;
const isStringList = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string') && new Set(v).size === v.length;

function validRegex(source: unknown): boolean {
  if (typeof source !== 'string') return false;
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

function checkValue(kind: Kind, value: unknown, field: string, depth: number): JsonSchemaProblem | null {
  const problem = (message: string): JsonSchemaProblem => ({ field, message });
  switch (kind) {
    case 'schema':
      return checkJsonSchema(value, field, depth + 1);
    case 'schemaMap':
      if (!isObject(value)) return problem('must be an object of schemas');
      return firstOf(Object.entries(value), ([k, v]) => checkJsonSchema(v, `${field}.${k}`, depth + 1));
    case 'schemaList':
      if (!Array.isArray(value) || value.length === 0) return problem('must be a non-empty array of schemas');
      return firstOf(value.map((v, i) => [i, v] as const), ([i, v]) => checkJsonSchema(v, `${field}[${i}]`, depth + 1));
    case 'schemaOrList':
      return Array.isArray(value) ? checkValue('schemaList', value, field, depth) : checkJsonSchema(value, field, depth + 1);
    case 'count':
      return isCount(value) ? null : problem('must be a non-negative integer');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : problem('must be a number');
    case 'string':
      return typeof value === 'string' ? null : problem('must be a string');
    case 'stringList':
      return isStringList(value) ? null : problem('must be an array of distinct strings');
    case 'regex':
      return validRegex(value) ? null : problem('must be a valid regular expression');
    case 'type':
      if (typeof value === 'string') return TYPES.has(value) ? null : problem(`unknown type ${JSON.stringify(value)}`);
      return isStringList(value) && (value as string[]).length > 0 && (value as string[]).every((t) => TYPES.has(t)) ? null : problem('must be a type name or an array of distinct type names');
    case 'boolean':
      return typeof value === 'boolean' ? null : problem('must be a boolean');
    case 'array':
      return Array.isArray(value) ? null : problem('must be an array');
    case 'dependencies':
      if (!isObject(value)) return problem('must be an object');
      return firstOf(Object.entries(value), ([k, v]) => (isStringList(v) ? null : checkJsonSchema(v, `${field}.${k}`, depth + 1)));
    default: {
      const unreachable: never = kind;
      return problem(`unhandled keyword kind ${String(unreachable)}`);
    }
  }
}

function firstOf<T>(items: Iterable<T>, check: (item: T) => JsonSchemaProblem | null): JsonSchemaProblem | null {
  for (const item of items) {
    const found = check(item);
    if (found) return found;
  }
  return null;
}

/** The first structural problem of a JSON Schema document, or null when it is well-formed. */
export function checkJsonSchema(schema: unknown, field: string, depth = 0): JsonSchemaProblem | null {
  if (typeof schema === 'boolean') return null;
  if (!isObject(schema)) return { field, message: 'must be a JSON Schema (an object or a boolean)' };
  if (depth > MAX_DEPTH) return { field, message: `JSON Schema nests deeper than ${MAX_DEPTH} levels` };
  for (const [keyword, value] of Object.entries(schema)) {
    const kind = KEYWORDS[keyword];
    if (!kind) continue;
    const found = checkValue(kind, value, `${field}.${keyword}`, depth);
    if (found) return found;
  }
  if (isObject(schema.patternProperties)) {
    const bad = Object.keys(schema.patternProperties).find((key) => !validRegex(key));
    if (bad !== undefined) return { field: `${field}.patternProperties`, message: `${JSON.stringify(bad)} is not a valid regular expression` };
  }
  const min = schema.minimum;
  const max = schema.maximum;
  if (typeof min === 'number' && typeof max === 'number' && min > max) return { field: `${field}.minimum`, message: 'minimum exceeds maximum' };
  if (typeof schema.multipleOf === 'number' && schema.multipleOf <= 0) return { field: `${field}.multipleOf`, message: 'must be greater than 0' };
  return null;
}
