import { randomBytes } from 'node:crypto';

/**
 * A JSON array kept as the text PostgreSQL sent (`message_history::text`), with its length. A
 * thread's history (1 MB at 2,000 messages) then goes from the database into a response, or to
 * an attempt's thread, without being parsed and serialised again on the way: serializeJson
 * writes the text into the response as it is, and the attempt parses it on its own thread
 * (bench/RESULTS.md session 10). Anything else that serialises it gets the array.
 */
export class JsonArrayText {
  static readonly EMPTY = new JsonArrayText('[]', 0);
  private parsed: Array<Record<string, unknown>> | null = null;

  constructor(
    readonly text: string,
    readonly length: number,
  ) {}

  /** The array itself (parsed once, on first use). */
  value(): Array<Record<string, unknown>> {
    return (this.parsed ??= JSON.parse(this.text) as Array<Record<string, unknown>>);
  }

  /** Inside serializeJson: a placeholder for the text; in any other JSON.stringify: the array. */
  toJSON(): unknown {
    return splicing ? splicing.add(this.text) : this.value();
  }
}

/** The array as either form holds it (the array when it was parsed anyway). */
export type JsonArray = ReadonlyArray<Record<string, unknown>> | JsonArrayText;

export function arrayOf(value: JsonArray): ReadonlyArray<Record<string, unknown>> {
  return value instanceof JsonArrayText ? value.value() : value;
}

// Random per process: no string of a serialised value can contain a placeholder by chance or
// by design (a client does not know it), so the splice only ever replaces placeholders.
const NONCE = randomBytes(12).toString('hex');
const PLACEHOLDER = new RegExp(`"\\\\u0001${NONCE}:(\\d+)"`, 'g');

class Splice {
  readonly texts: string[] = [];

  add(text: string): string {
    this.texts.push(text);
    return `\u0001${NONCE}:${this.texts.length - 1}`;
  }
}

/** Set only while serializeJson's JSON.stringify runs (synchronous, so never interleaved). */
let splicing: Splice | null = null;

/** JSON.stringify, with every JsonArrayText in `value` written as its text, verbatim. */
export function serializeJson(value: unknown): string {
  const splice = new Splice();
  splicing = splice;
  let out: string;
  try {
    out = JSON.stringify(value);
  } finally {
    splicing = null;
  }
  if (splice.texts.length === 0) return out;
  return out.replace(PLACEHOLDER, (_match, i: string) => splice.texts[Number(i)]!);
}
