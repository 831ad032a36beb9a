import type { TSchema } from '@sinclair/typebox';

export type JsonObject = Record<string, unknown>;

// Keywords whose values are instance data, not subschemas: an `$id` or `$ref` inside them is
// the user's data and must pass through untouched.
const DATA_KEYWORDS = new Set(['const', 'default', 'enum', 'examples', 'example']);

export const schemaRef = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/** OpenAPI component names must match ^[a-zA-Z0-9._-]+$. */
const componentName = (id: string): string => id.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * Turns TypeBox schemas into the document's JSON Schema (OpenAPI 3.1 is JSON Schema 2020-12,
 * so TypeBox's output passes through). Every subschema with an `$id` is hoisted once into
 * components.schemas and replaced by a `$ref`, so a shared view (Workspace, Error, …) appears
 * once and clients generate one type for it. Built per document, never shared between builds.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonObject> = {};
  private readonly texts = new Map<string, string>();

  /** The schema as plain JSON Schema: TypeBox's symbol keys vanish in the JSON round trip. */
  use(schema: TSchema): JsonObject {
    return this.hoist(JSON.parse(JSON.stringify(schema)) as JsonObject) as JsonObject;
  }

  /** Registers a schema under a fixed name (e.g. `Error`) and returns its `$ref`. */
  named(name: string, schema: TSchema): JsonObject {
    const plain = this.use(schema);
    if (typeof plain.$ref === 'string') return plain;
    this.register(name, plain);
    return schemaRef(componentName(name));
  }

  private hoist(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((item) => this.hoist(item));
    if (node === null || typeof node !== 'object') return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node as JsonObject)) {
      if (key === '$id' && typeof value === 'string') continue;
      out[key] = DATA_KEYWORDS.has(key) ? value : this.hoist(value);
    }
    // TypeBox's Type.Ref(T) emits `$ref: "<T's $id>"`: point it at the hoisted component.
    if (typeof out.$ref === 'string' && !out.$ref.startsWith('#')) out.$ref = `#/components/schemas/${componentName(out.$ref)}`;
    const id = (node as JsonObject).$id;
    if (typeof id !== 'string') return out;
    this.register(id, out);
    return schemaRef(componentName(id));
  }

  private register(id: string, schema: JsonObject): void {
    const name = componentName(id);
    const text = JSON.stringify(schema);
    const known = this.texts.get(name);
    // Two different schemas under one $id would silently document the wrong shape for one of
    // the routes that use it: refuse, so the route table's author renames one.
    if (known !== undefined && known !== text) throw new Error(`two different schemas share the $id ${JSON.stringify(id)}`);
    this.texts.set(name, text);
    this.schemas[name] = schema;
  }
}
