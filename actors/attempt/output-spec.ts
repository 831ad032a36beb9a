// Structured output (config.output_spec). The final answer is parsed as JSON and validated:
// - a single `schema`: the answer is a JSON value matching it; the run's output is that value.
// - `variants`: the answer is `{"variant": <name>, "value": <value>}`, the value matching the
//   named variant's schema (a variant without a schema accepts any value); the run's output is
//   that object. The {variant, value} envelope works for any schema type, objects or not.
// A model often wraps JSON in a Markdown code fence; one surrounding fence is accepted.
import type { OutputSpec } from './agent-config.js';
import type { SchemaCheck, SchemaCompiler } from './json-schema.js';

export type OutputCheck = { ok: true; output: unknown } | { ok: false; problem: string };

export interface OutputChecker {
  /** Appended to the agent's instructions so the model knows the expected shape. */
  instructions: string;
  check(text: string): OutputCheck;
}

/** Null when the spec asks for no structure (output = the final text). Throws on an invalid schema. */
export function compileOutputSpec(spec: OutputSpec | null | undefined, compiler: SchemaCompiler): OutputChecker | null {
  if (spec?.variants?.length) return variantsChecker(spec, compiler);
  if (spec?.schema) return schemaChecker(spec, spec.schema, compiler.compile(spec.schema));
  return null;
}

export function reaskMessage(problem: string): string {
  return `Your answer could not be accepted: ${problem}. Answer again with only the JSON described in your instructions, without any other text.`;
}

function schemaChecker(spec: OutputSpec, schema: Record<string, unknown>, validate: SchemaCheck): OutputChecker {
  const about = [spec.name, spec.description].filter((s) => !!s).join(': ');
  return {
    instructions: [
      'Give your final answer as a single JSON value, with no other text, that matches this JSON Schema:',
      JSON.stringify(schema),
      ...(about ? [`(${about})`] : []),
    ].join('\n'),
    check(text) {
      const parsed = parseJsonAnswer(text);
      if (!parsed.ok) return parsed;
      const problem = validate(parsed.output);
      return problem === undefined ? parsed : { ok: false, problem: `it does not match the schema: ${problem}` };
    },
  };
}

function variantsChecker(spec: OutputSpec, compiler: SchemaCompiler): OutputChecker {
  const variants = new Map((spec.variants ?? []).map((v) => [v.name, v.schema ? compiler.compile(v.schema) : undefined] as const));
  const listing = (spec.variants ?? []).map((v) => `- "${v.name}"${v.description ? ` (${v.description})` : ''}: ${v.schema ? JSON.stringify(v.schema) : 'any JSON value'}`);
  return {
    instructions: [
      'Give your final answer as a single JSON object, with no other text: {"variant": <variant name>, "value": <value>}.',
      'Choose one variant; its value must match the variant\'s JSON Schema:',
      ...listing,
    ].join('\n'),
    check(text) {
      const parsed = parseJsonAnswer(text);
      if (!parsed.ok) return parsed;
      const answer = parsed.output;
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { ok: false, problem: 'it is not a JSON object {"variant", "value"}' };
      const { variant, value } = answer as Record<string, unknown>;
      if (typeof variant !== 'string' || !variants.has(variant)) {
        return { ok: false, problem: `"variant" must be one of ${[...variants.keys()].map((n) => JSON.stringify(n)).join(', ')}` };
      }
      if (value === undefined) return { ok: false, problem: 'it has no "value"' };
      const problem = variants.get(variant)?.(value);
      return problem === undefined ? { ok: true, output: { variant, value } } : { ok: false, problem: `the value does not match variant "${variant}": ${problem}` };
    },
  };
}

const FENCE = /^```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?```$/;

function parseJsonAnswer(text: string): OutputCheck {
  const trimmed = text.trim();
  const body = FENCE.exec(trimmed)?.[1] ?? trimmed;
  try {
    return { ok: true, output: JSON.parse(body) as unknown };
  } catch {
    return { ok: false, problem: 'it is not valid JSON' };
  }
}
