// Scenario: encode/decode of a ~50 KB agent checkpoint, msgpackr against JSON. An attempt
// encodes a checkpoint at every model turn inside the Piscina task, so this cost is paid on
// the agent loop's critical path (issue 10 target: encode ≤ 0.2 ms).
import { isDeepStrictEqual } from 'node:util';
import { Packr, Unpackr } from 'msgpackr';
import type { BenchContext, Figures, Scenario } from '../scenario.js';

const TARGET_BYTES = 50 * 1024;
const WARMUP_OPS = 200;
const BATCH_OPS = 20;

// Deterministic content: a tiny LCG so every run encodes the same bytes.
function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const WORDS = ('the agent reads the file and then calls a tool to search for the error in the log ' +
  'before it writes a patch that fixes the failing test and reports the result to the user with ' +
  'a short summary of what changed and why').split(' ');

function sentence(rand: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
}

function toolCall(rand: () => number, i: number): Record<string, unknown> {
  return {
    id: `call_${i.toString(36).padStart(8, '0')}`,
    type: 'function',
    name: ['search_files', 'read_file', 'run_command', 'web_search'][i % 4],
    arguments: {
      query: sentence(rand, 6),
      path: `/workspace/src/module_${i}/index.ts`,
      options: { max_results: 10 + (i % 5), case_sensitive: i % 2 === 0, globs: ['*.ts', '*.md'] },
      range: { start: i * 10, end: i * 10 + 40 },
    },
  };
}

function usage(rand: () => number): Record<string, unknown> {
  return {
    input_tokens: Math.floor(rand() * 20_000),
    output_tokens: Math.floor(rand() * 2_000),
    cached_tokens: Math.floor(rand() * 10_000),
    reasoning_tokens: Math.floor(rand() * 1_000),
    cost_usd: Math.round(rand() * 1e6) / 1e8,
  };
}

/** A thread's agent state as an attempt checkpoints it: conversation, tool traffic, usage. */
export function buildAgentState(targetBytes: number = TARGET_BYTES): Record<string, unknown> {
  const rand = seededRandom(42);
  const messages: Record<string, unknown>[] = [];
  const state: Record<string, unknown> = {
    version: 3,
    run_id: 'run_01hzx5k2q8d7m3v9b4n6p1t0ye',
    thread_id: 'thr_01hzx5k0a1b2c3d4e5f6g7h8jk',
    checkpoint_seq: 0,
    attempt: { generation: 4, started_at: '2025-01-01T12:00:00.000Z', lease_expires_at: null },
    agent: {
      id: 'agt_01hzx4', revision_id: 'rev_01hzx4_7', model: 'large-model-2025',
      settings: { temperature: 0.7, top_p: 0.95, max_output_tokens: 4096, parallel_tool_calls: true },
      tools: ['search_files', 'read_file', 'run_command', 'web_search'].map((name) => ({
        name, description: sentence(rand, 14), parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      })),
    },
    messages,
    pending_tool_calls: [] as unknown[],
    usage_total: usage(rand),
    metadata: { labels: { team: 'platform', env: 'bench' }, steered: false, incorporated_checkpoint_seq: null },
  };
  for (let i = 0; JSON.stringify(state).length < targetBytes; i++) {
    const created_at = new Date(Date.UTC(2025, 0, 1, 12, 0, i)).toISOString();
    if (i % 3 === 0) {
      messages.push({ id: `itm_${i}`, role: 'user', created_at, content: [{ type: 'text', text: sentence(rand, 40) }] });
    } else if (i % 3 === 1) {
      messages.push({
        id: `itm_${i}`, role: 'assistant', created_at,
        content: [{ type: 'text', text: sentence(rand, 60) }],
        tool_calls: [toolCall(rand, i), toolCall(rand, i + 1)],
        usage: usage(rand), stop_reason: 'tool_use',
      });
    } else {
      messages.push({
        id: `itm_${i}`, role: 'tool', created_at, tool_call_id: `call_${i.toString(36).padStart(8, '0')}`,
        content: [{ type: 'text', text: sentence(rand, 80) }], is_error: i % 7 === 0,
      });
    }
    state.checkpoint_seq = i;
  }
  return state;
}

interface Codec {
  readonly name: string;
  encode(value: unknown): Uint8Array;
  /** A long-lived decoder, as the host keeps one. */
  decode(bytes: Uint8Array): unknown;
  /** A decoder that has seen nothing before: what another process starting a resume has. */
  freshDecode(bytes: Uint8Array): unknown;
}

function codecs(): Codec[] {
  // Records: structures are written inline in each message (no shared `structures` array), so
  // a fresh Unpackr in another process decodes them; that is the property a stored checkpoint needs.
  const records = new Packr();
  const recordsReader = new Unpackr();
  const plain = new Packr({ useRecords: false });
  const plainReader = new Unpackr({ useRecords: false });
  return [
    { name: 'msgpack_records', encode: (v) => records.pack(v), decode: (b) => recordsReader.unpack(b), freshDecode: (b) => new Unpackr().unpack(b) },
    { name: 'msgpack_plain', encode: (v) => plain.pack(v), decode: (b) => plainReader.unpack(b), freshDecode: (b) => new Unpackr({ useRecords: false }).unpack(b) },
    {
      name: 'json',
      encode: (v) => Buffer.from(JSON.stringify(v), 'utf8'),
      decode: (b) => JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8')) as unknown,
      freshDecode: (b) => JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8')) as unknown,
    },
  ];
}

/** Median per-op µs over batches, run for `budgetMs`; the median keeps a GC pause out. */
function timeOp(op: () => unknown, budgetMs: number): number {
  for (let i = 0; i < WARMUP_OPS; i++) op();
  const perOp: number[] = [];
  const end = performance.now() + budgetMs;
  while (performance.now() < end || perOp.length < 5) {
    const t0 = performance.now();
    for (let i = 0; i < BATCH_OPS; i++) op();
    perOp.push(((performance.now() - t0) * 1000) / BATCH_OPS);
  }
  perOp.sort((a, b) => a - b);
  return Math.round((perOp[Math.floor(perOp.length / 2)] ?? NaN) * 10) / 10;
}

/** msgpackr returns a view into its reusable buffer; transferring it needs an owned copy. */
function ownedArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

async function run(ctx: BenchContext): Promise<Figures> {
  const state = buildAgentState();
  // Bounded by --seconds like the load scenarios, but 7 measurements share it.
  const budgetMs = Math.min(1000, Math.max(150, (ctx.seconds * 1000) / 10));
  const figures: Figures = { state_json_bytes: Buffer.byteLength(JSON.stringify(state)) };
  let best: { name: string; encode: number; decode: number; bytes: number; codec: Codec } | undefined;
  for (const codec of codecs()) {
    const bytes = codec.encode(state);
    const roundTrips = isDeepStrictEqual(codec.freshDecode(bytes), state);
    const encodeUs = timeOp(() => codec.encode(state), budgetMs);
    const decodeUs = timeOp(() => codec.decode(bytes), budgetMs);
    figures[`${codec.name}_encode_us`] = encodeUs;
    figures[`${codec.name}_decode_us`] = decodeUs;
    figures[`${codec.name}_bytes`] = bytes.byteLength;
    figures[`${codec.name}_round_trips`] = roundTrips ? 'yes' : 'no';
    const isBetter = !best || encodeUs + decodeUs < best.encode + best.decode;
    if (codec.name !== 'json' && roundTrips && isBetter) {
      best = { name: codec.name, encode: encodeUs, decode: decodeUs, bytes: bytes.byteLength, codec };
    }
    await new Promise((resolve) => setImmediate(resolve)); // let the runner's timeout fire between codecs
    if (ctx.signal.aborted) throw new Error('aborted');
  }
  if (!best) throw new Error('no msgpack variant round-trips the agent state');
  const chosen = best.codec;
  figures.msgpack_variant = best.name;
  figures.msgpack_encode_us = best.encode;
  figures.msgpack_decode_us = best.decode;
  figures.msgpack_bytes = best.bytes;
  figures.msgpack_encode_transferable_us = timeOp(() => ownedArrayBuffer(chosen.encode(state)), budgetMs);
  return figures;
}

export const checkpointCodec: Scenario = {
  name: 'checkpoint-codec',
  kind: 'scenario',
  run,
  ratios: [
    { name: 'checkpoint_json_vs_msgpack_encode', numerator: 'checkpoint-codec.json_encode_us', denominator: 'checkpoint-codec.msgpack_encode_us' },
    { name: 'checkpoint_json_vs_msgpack_decode', numerator: 'checkpoint-codec.json_decode_us', denominator: 'checkpoint-codec.msgpack_decode_us' },
  ],
  targets: [{ name: 'checkpoint_encode_50kb', figure: 'checkpoint-codec.msgpack_encode_us', op: '<=', target: 200, unit: 'us' }],
};
