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

/** The first `count` messages of a thread's history, as JSON text (runtime/cache HistoryPrefixes). */
export interface HistoryPrefix {
  readonly count: number;
  readonly text: string;
}

/**
 * A history of `total` messages from a prefix of it and the JSON array of the messages after
 * the prefix (null: none was read, the prefix is the whole history).
 */
export function joinHistory(prefix: HistoryPrefix, rest: string | null, total: number): JsonArrayText {
  if (rest === null || rest === '[]') return new JsonArrayText(prefix.text, total);
  return new JsonArrayText(`${prefix.text.slice(0, -1)}, ${rest.slice(1)}`, total);
}

/**
 * The whole history of `count` messages (message_count: the history's length, kept by the
 * trigger of migration 0017 on the same row version) from what the statement read: nothing when
 * the history is empty or exactly the prefix held; the messages after the prefix when it is
 * shorter (a history only grows at its end, so the prefix is still its beginning); the whole
 * history otherwise (no prefix held).
 */
export function historyAfter(prefix: HistoryPrefix | undefined, read: string | null, count: number): JsonArrayText {
  if (count === 0) return JsonArrayText.EMPTY;
  if (prefix && prefix.count > 0 && prefix.count <= count) return joinHistory(prefix, read, count);
  return new JsonArrayText(read ?? '[]', count);
}

/** The array as either form holds it (the array when it was parsed anyway). */
export type JsonArray = ReadonlyArray<Record<string, unknown>> | JsonArrayText;

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
